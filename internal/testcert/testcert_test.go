package testcert

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"
	"time"
)

// A server with Cert is trusted by a client using Pool (or PEM) for
// 127.0.0.1 and localhost, and Cert is made once.
func TestCertHandshake(t *testing.T) {
	cert, err := Cert()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Cert(); again.Leaf != cert.Leaf {
		t.Error("Cert made a second certificate")
	}
	fromPEM := x509.NewCertPool()
	if !fromPEM.AppendCertsFromPEM(PEM(cert)) {
		t.Fatal("PEM does not parse")
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
	}{{"127.0.0.1", Pool(cert)}, {"localhost", fromPEM}} {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(),
			&tls.Config{RootCAs: tc.roots, ServerName: tc.name})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) != "ok" {
			t.Errorf("%s: read %q", tc.name, b)
		}
	}
	// A certificate the client does not trust fails the handshake.
	other, err := New(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: Pool(other), ServerName: "127.0.0.1"}); err == nil {
		t.Error("a client trusting another certificate accepted this one")
	}
}
