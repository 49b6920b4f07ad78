package exchange

import (
	"crypto/x509"
	"fmt"
	"os"
)

// TrustedRoots returns the system's certificate authorities and those in
// the PEM file pemFile, for a client that must trust a test target's own
// CA: the suite's --ca-cert and the proxy's backend alike.
func TrustedRoots(pemFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(pemFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate in %s", pemFile)
	}
	return pool, nil
}
