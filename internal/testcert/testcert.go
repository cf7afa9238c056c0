// Package testcert makes the self-signed TLS certificate that riptide's
// tests, benchmarks and example server use: ECDSA P-256, for 127.0.0.1, ::1
// and localhost, marked as its own CA so that a client can trust it by
// adding it to a CertPool. The core module's tests import it, and so do the
// bench/, ecosystem/ and examples/ code in this repository (Go's internal
// rule admits every package under github.com/riptide-http/riptide).
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync"
	"time"
)

// New makes a fresh certificate valid from an hour ago for validFor, with
// its Leaf set.
func New(validFor time.Duration) (tls.Certificate, error) {
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
		Subject:               pkix.Name{CommonName: "riptide test"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

var shared = sync.OnceValues(func() (tls.Certificate, error) { return New(24 * time.Hour) })

// Cert returns the certificate of this process, made on the first call
// and valid for a day. Callers must not modify it.
func Cert() (tls.Certificate, error) { return shared() }

// PEM returns c's certificate (not its key) PEM-encoded, for a CertPool or
// an outside client's CA file.
func PEM(c tls.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]})
}

// Pool returns a CertPool that trusts c.
func Pool(c tls.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Leaf)
	return p
}
