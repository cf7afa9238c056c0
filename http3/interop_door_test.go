package http3

// The doors of the interop tests (interop_test.go): the application
// attached to riptide's server through the native door (func(*Ctx)) or
// the compat door (FromHTTP), served over HTTP/3 by Serve and, for the
// Alt-Svc case, over TLS (HTTP/2, HTTP/1.1) by the same riptide.Server,
// whose responses then advertise HTTP/3 by themselves.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// newDoorServer returns a riptide.Server running app through door d.
func newDoorServer(d door, app *interopApp, pki *interopPKI) *riptide.Server {
	srv := &riptide.Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{pki.tls}}}
	if d == doorCompat {
		srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { app.serve(compatExchange{w, r}) }))
	} else {
		srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) { app.serve(nativeExchange{x}) })
	}
	return srv
}

// serveDoor serves srv over HTTP/3 on every packet connection of udp and
// over TLS on every listener of tcp until the test ends.
func serveDoor(t *testing.T, srv *riptide.Server, udp []net.PacketConn, tcp []net.Listener) {
	t.Helper()
	errc := make(chan error, len(udp)+len(tcp))
	for _, pc := range udp {
		go func() { errc <- Serve(srv, pc, nil, nil) }()
	}
	for _, ln := range tcp {
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	}
	t.Cleanup(func() {
		// Shutdown waits for the connections a client left open (a
		// killed browser sends no CONNECTION_CLOSE) only so long.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		for range len(udp) + len(tcp) {
			if err := <-errc; err != nil && !errors.Is(err, riptide.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}
	})
}

// nativeExchange is a request through the native door.
type nativeExchange struct{ x *riptide.Ctx }

func (e nativeExchange) method() string  { return string(e.x.Method()) }
func (e nativeExchange) path() string    { return string(e.x.Path()) }
func (e nativeExchange) body() io.Reader { return e.x.Body() }
func (e nativeExchange) http3() bool     { return e.x.IsHTTP3() }

func (e nativeExchange) trailers() [][2]string {
	var out [][2]string
	for _, f := range e.x.Trailers() {
		out = append(out, [2]string{string(f.Name), string(f.Value)})
	}
	return out
}

func (e nativeExchange) respond(status int, header [][2]string, body []byte, trailers [][2]string) {
	e.x.SetStatus(status)
	for _, h := range header {
		e.x.AddHeader(h[0], h[1])
	}
	e.x.Write(body)
	for _, f := range trailers {
		e.x.SetTrailer(f[0], f[1])
	}
}

// compatExchange is a request through the compat door (net/http
// semantics: ProtoMajor, Request.Trailer, the Trailer header).
type compatExchange struct {
	w http.ResponseWriter
	r *http.Request
}

func (e compatExchange) method() string  { return e.r.Method }
func (e compatExchange) path() string    { return e.r.URL.Path }
func (e compatExchange) body() io.Reader { return e.r.Body }
func (e compatExchange) http3() bool     { return e.r.ProtoMajor == 3 }

func (e compatExchange) trailers() [][2]string {
	var out [][2]string
	for name, vs := range e.r.Trailer {
		for _, v := range vs {
			out = append(out, [2]string{strings.ToLower(name), v})
		}
	}
	return out
}

func (e compatExchange) respond(status int, header [][2]string, body []byte, trailers [][2]string) {
	h := e.w.Header()
	for _, f := range header {
		h.Add(f[0], f[1])
	}
	if len(trailers) == 0 && status != 204 && status != 304 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	for _, f := range trailers {
		h.Add("Trailer", f[0])
	}
	e.w.WriteHeader(status)
	e.w.Write(body)
	for _, f := range trailers {
		h.Set(f[0], f[1])
	}
}
