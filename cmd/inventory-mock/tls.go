package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// tlsConfig loads the certificate pair, or makes a self-signed one and,
// with --tls-cert-out, writes its certificate as PEM for clients to trust.
// It returns the path written, if any.
func tlsConfig(o *options) (*tls.Config, string, error) {
	var cert tls.Certificate
	var err error
	if o.tlsSelfSigned {
		cert, err = selfSigned()
	} else {
		cert, err = tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	}
	if err != nil {
		return nil, "", fmt.Errorf("TLS: %w", err)
	}
	if o.tlsCertOut != "" {
		block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
		if err := os.WriteFile(o.tlsCertOut, block, 0o644); err != nil {
			return nil, "", fmt.Errorf("--tls-cert-out: %w", err)
		}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, o.tlsCertOut, nil
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
