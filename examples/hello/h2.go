package main

// HTTP/2 for the example: -h2c serves cleartext HTTP/2 (prior knowledge and
// Upgrade: h2c) beside HTTP/1.1 on the same port; -tls serves HTTPS with
// ALPN h2 and http/1.1, with the certificate from -cert/-key or a
// self-signed one made at start. Both work with -mode native and compat.
//
//	go run ./examples/hello -h2c
//	curl --http2-prior-knowledge http://127.0.0.1:8080/
//	go run ./examples/hello -tls
//	curl -k --http2 https://127.0.0.1:8080/

import (
	"crypto/tls"
	"flag"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
)

var (
	h2cFlag  = flag.Bool("h2c", false, "also serve cleartext HTTP/2 (prior knowledge and Upgrade: h2c)")
	tlsFlag  = flag.Bool("tls", false, "serve HTTPS (ALPN h2 and http/1.1)")
	certFlag = flag.String("cert", "", "PEM certificate file for -tls (default: self-signed, made at start)")
	keyFlag  = flag.String("key", "", "PEM key file for -tls")
)

// h2Listener applies -h2c and -tls to srv and returns the listener to serve.
func h2Listener(srv *riptide.Server, ln net.Listener, log *slog.Logger) net.Listener {
	if *h2cFlag {
		srv.HTTP2 = &riptide.HTTP2Config{H2C: true, H2CUpgrade: true}
		log.Info("h2c on", "try", "curl --http2-prior-knowledge http://"+ln.Addr().String()+"/")
	}
	if !*tlsFlag {
		return ln
	}
	var cert tls.Certificate
	var err error
	if *certFlag != "" || *keyFlag != "" {
		cert, err = tls.LoadX509KeyPair(*certFlag, *keyFlag)
	} else {
		cert, err = selfSigned()
		log.Info("using a self-signed certificate for 127.0.0.1 and localhost")
	}
	if err != nil {
		log.Error("tls certificate", "err", err)
		os.Exit(1)
	}
	log.Info("tls on", "addr", "https://"+ln.Addr().String(), "try", "curl -k --http2 https://"+ln.Addr().String()+"/")
	// The PROXY header (-proxy-from) comes before the TLS handshake.
	return tls.NewListener(srv.ProxyListener(ln), &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"}, // ALPN: h2 preferred
	})
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1 and
// localhost, valid for a year (internal/testcert: for trying the example,
// not for production).
func selfSigned() (tls.Certificate, error) { return testcert.New(365 * 24 * time.Hour) }
