// Command h3example serves the same routes over HTTP/1.1, HTTP/2 and
// HTTP/3 on one port number: TLS over TCP (HTTP/1.1 and HTTP/2 by ALPN)
// and QUIC over UDP, the TCP responses advertising HTTP/3 with Alt-Svc.
//
//	go run ./cmd/h3example -addr 127.0.0.1:8443
//	curl -k https://127.0.0.1:8443/proto            # HTTP/2, with alt-svc: h3=":8443"
//
// Without -cert and -key it makes a self-signed certificate and prints the
// flags that make Chromium trust it and speak QUIC to the port at once.
//
// Routes (native mode, the default; -mode compat serves them through an
// http.ServeMux on the same engine):
//
//	GET /        200 "Hello, World!"
//	POST /       echoes the request body (and its trailers)
//	GET /json    {"message":"Hello, World!"}
//	GET /proto   the protocol the request came over: HTTP/1.1, HTTP/2 or HTTP/3
//	GET /stream  5 server-sent events, 100 ms apart
//	GET /ready   200 "ready", 503 "draining" once shutting down
//
// SIGINT and SIGTERM shut down gracefully: GOAWAY on HTTP/2 and HTTP/3,
// the handlers finish, then the connections close.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/http3"
	"github.com/riptide-http/riptide/router"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "listen address, HOST:PORT, for TCP and UDP alike")
	mode := flag.String("mode", "native", "handler API: native or compat")
	certFile := flag.String("cert", "", "certificate file (PEM); empty: a self-signed one")
	keyFile := flag.String("key", "", "key file (PEM)")
	allow0RTT := flag.Bool("0rtt", false, "accept 0-RTT requests (safe methods only run early)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *mode, *certFile, *keyFile, *allow0RTT, log, nil); err != nil {
		log.Error("h3example", "err", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, then shuts down; ready, if set, is told
// the address once both listeners are open.
func run(ctx context.Context, addr, mode, certFile, keyFile string, allow0RTT bool, log *slog.Logger, ready func(string)) error {
	srv := &riptide.Server{Logger: log}
	switch mode {
	case "native":
		srv.Handler = nativeRoutes(srv)
	case "compat":
		srv.Handler = riptide.FromHTTP(compatRoutes(srv))
	default:
		return fmt.Errorf("unknown -mode %q; want native or compat", mode)
	}
	cert, err := loadCert(certFile, keyFile, log)
	if err != nil {
		return err
	}
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// The same port number over UDP: what Alt-Svc advertises.
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	defer pc.Close()
	log.Info("listening", "url", "https://"+ln.Addr().String(), "tcp", "HTTP/1.1, HTTP/2", "udp", "HTTP/3", "mode", mode)

	errs := make(chan error, 2)
	go func() { errs <- srv.ServeTLS(ln, "", "") }()
	go func() { errs <- http3.Serve(srv, pc, nil, &http3.Options{Allow0RTT: allow0RTT}) }()
	if ready != nil {
		ready(ln.Addr().String())
	}

	var first error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case first = <-errs:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
	}
	for range cap(errs) - boolInt(first != nil) {
		if err := <-errs; first == nil && !errors.Is(err, riptide.ErrServerClosed) {
			first = err
		}
	}
	if errors.Is(first, riptide.ErrServerClosed) {
		first = nil
	}
	return first
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loadCert loads the certificate, or makes a self-signed one and prints
// how to point Chromium at it.
func loadCert(certFile, keyFile string, log *slog.Logger) (tls.Certificate, error) {
	if certFile != "" || keyFile != "" {
		return tls.LoadX509KeyPair(certFile, keyFile)
	}
	cert, err := selfSigned(30 * 24 * time.Hour)
	if err != nil {
		return cert, err
	}
	spki := sha256.Sum256(cert.Leaf.RawSubjectPublicKeyInfo)
	log.Info("self-signed certificate; for Chromium",
		"flags", "--ignore-certificate-errors-spki-list="+base64.StdEncoding.EncodeToString(spki[:])+" --origin-to-force-quic-on=HOST:PORT")
	return cert, nil
}

// selfSigned makes a certificate for localhost and the loopback
// addresses, valid from an hour ago for validFor, with its Leaf set.
func selfSigned(validFor time.Duration) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "h3example"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
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

// nativeRoutes returns the routes on the native API.
func nativeRoutes(srv *riptide.Server) riptide.Handler {
	r := router.New()
	r.HandleFunc("GET /{$}", func(x *riptide.Ctx) {
		x.SetContentType("text/plain; charset=utf-8")
		x.WriteString("Hello, World!")
	})
	r.HandleFunc("POST /{$}", func(x *riptide.Ctx) {
		body, err := io.ReadAll(x.Body())
		if err != nil {
			x.Error(400, err.Error())
			return
		}
		for _, f := range x.Trailers() {
			x.SetTrailer(string(f.Name), string(f.Value))
		}
		x.Write(body)
	})
	r.HandleFunc("GET /json", func(x *riptide.Ctx) {
		x.JSON(200, struct {
			Message string `json:"message"`
		}{"Hello, World!"})
	})
	r.HandleFunc("GET /proto", func(x *riptide.Ctx) {
		x.SetContentType("text/plain; charset=utf-8")
		switch {
		case x.IsHTTP3():
			x.WriteString("HTTP/3\n")
		case x.IsHTTP2():
			x.WriteString("HTTP/2\n")
		default:
			x.WriteString("HTTP/1.1\n")
		}
	})
	r.HandleFunc("GET /stream", func(x *riptide.Ctx) {
		x.SetContentType("text/event-stream")
		for i := range 5 {
			if i > 0 {
				select {
				case <-x.Done():
					return
				case <-x.ShuttingDown():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			fmt.Fprintf(x, "data: event %d\n\n", i)
			x.Flush()
		}
	})
	r.Handle("GET /ready", srv.ReadyHandler())
	return r
}

// compatRoutes returns the same routes as a net/http handler.
func compatRoutes(srv *riptide.Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello, World!")
	})
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for k, vs := range r.Trailer {
			w.Header()[http.TrailerPrefix+k] = vs
		}
		w.Write(body)
	})
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"message":"Hello, World!"}`+"\n")
	})
	mux.HandleFunc("GET /proto", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.ProtoMajor == 1 {
			io.WriteString(w, "HTTP/1.1\n")
			return
		}
		fmt.Fprintf(w, "HTTP/%d\n", r.ProtoMajor)
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 5 {
			if i > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			fmt.Fprintf(w, "data: event %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.Handle("GET /ready", srv.ReadyHTTPHandler())
	return mux
}
