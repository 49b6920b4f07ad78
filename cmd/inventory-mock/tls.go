package main

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// tlsConfig loads the certificate pair, or makes a self-signed one. It
// returns, for --tls-cert-out, the self-signed certificate as PEM; serve
// writes it once it listens.
func tlsConfig(o *options) (*tls.Config, []byte, error) {
	var certPEM []byte
	cert, err := tls.Certificate{}, error(nil)
	if o.TLSSelfSigned {
		if cert, err = selfSigned(); err != nil {
			return nil, nil, fmt.Errorf("--tls-self-signed: %w", err)
		}
		certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	} else if cert, err = tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
		return nil, nil, fmt.Errorf("--tls-cert, --tls-key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, certPEM, nil
}

// removeStale removes the --tls-cert-out file an earlier run left, so that
// the file's presence says that this run listens.
func removeStale(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--tls-cert-out: %w", err)
	}
	return nil
}

// writeAtomically writes data to path through a temporary file in the same
// directory and a rename: a reader sees no file, or all of it.
func writeAtomically(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// A plainHTTPListener is the listener under a TLS one: a client that sends
// plain HTTP to the HTTPS port gets a 400 with the Error body every other
// error has, instead of net/http's line of plain text. A TLS client's first
// byte is 0x16 (a handshake record); an HTTP request's is a letter of its
// method. The look happens on the connection's first read, in its own
// goroutine, never in Accept.
type plainHTTPListener struct{ net.Listener }

func (l plainHTTPListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &plainHTTPConn{Conn: c}, nil
}

// A plainHTTPConn answers plain HTTP on its first read.
type plainHTTPConn struct {
	net.Conn
	read bool // the first byte has been looked at
}

// errPlainHTTP ends the TLS handshake of a client that sent plain HTTP;
// net/http logs it as the handshake's error.
var errPlainHTTP = errors.New("the client sent plain HTTP to the HTTPS port; answered 400 https_required")

func (c *plainHTTPConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.read || n == 0 {
		return n, err
	}
	c.read = true
	if b := p[0]; b < 'A' || b > 'Z' {
		return n, err
	}
	body := httpapi.ErrorBody(http.StatusBadRequest, httpapi.CodeHTTPSRequired,
		"this port serves HTTPS: send the request to https://"+c.LocalAddr().String()+" (curl --cacert FILE trusts a self-signed certificate)")
	c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c.Conn, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	c.Conn.Close()
	return 0, errPlainHTTP
}

// selfSigned makes an ECDSA certificate for localhost, 127.0.0.1 and ::1,
// valid for a week, its key held only in memory. It is its own CA: a
// client that trusts the certificate (--tls-cert-out) can verify it.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "inventory-mock (self-signed)"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
