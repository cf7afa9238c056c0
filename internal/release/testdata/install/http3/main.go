// Command http3 is the install test's program for the http3 module alone:
// a module outside the repository that ran only
// `go get github.com/riptide-http/riptide/http3@VERSION` (which brings the
// core module and quic-go) serves one native handler over HTTP/1.1 (TCP)
// and HTTP/3 (QUIC), and fetches from itself with net/http and quic-go's
// HTTP/3 client.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/http3"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run() error {
	cert, pool, err := selfSigned()
	if err != nil {
		return err
	}
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			proto := "HTTP/1.1"
			if c.IsHTTP3() {
				proto = "HTTP/3"
			}
			c.SetContentType("text/plain")
			c.WriteString("hello over " + proto)
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer pc.Close()
	done := make(chan error, 2)
	go func() { done <- srv.Serve(ln) }()
	go func() { done <- http3.Serve(srv, pc, nil, nil) }()

	h1 := &http.Client{Timeout: 10 * time.Second}
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	defer tr.Close()
	h3 := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, c := range []struct {
		client *http.Client
		url    string
		proto  string
		major  int
	}{
		{h1, "http://" + ln.Addr().String() + "/", "HTTP/1.1", 1},
		{h3, "https://" + pc.LocalAddr().String() + "/", "HTTP/3", 3},
	} {
		res, err := c.client.Get(c.url)
		if err != nil {
			return fmt.Errorf("%s: %w", c.proto, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.proto, err)
		}
		if want := "hello over " + c.proto; res.StatusCode != 200 || res.ProtoMajor != c.major || string(body) != want {
			return fmt.Errorf("%s: got %d %s %q, want 200 %s %q", c.url, res.StatusCode, res.Proto, body, c.proto, want)
		}
		fmt.Printf("ok %s: %s %q\n", riptide.Version, res.Proto, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return err
	}
	for range cap(done) {
		if err := <-done; err != nil && !errors.Is(err, riptide.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// selfSigned returns a certificate for localhost and 127.0.0.1, and a pool
// that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
