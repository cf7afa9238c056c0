package http3

// The doors of the interop tests (interop_test.go): how the application
// is attached to the HTTP/3 server. This is the one file that changes
// when the public Serve takes over from the engine's accept loop.

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/h3srv"
)

// serveDoor serves app over HTTP/3 on pc through door d until the test
// ends.
func serveDoor(t *testing.T, d door, app *interopApp, pc net.PacketConn, tlsConf *tls.Config) {
	t.Helper()
	if d == doorCompat {
		// Not a missing tool (CI must not fail on it): the code is not
		// written yet.
		t.Skip("the compat door over HTTP/3 needs the public http3.Serve, not built yet")
	}
	ln, err := quic.Listen(pc, tlsConf, quicConfig(&h3srv.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveListener(ctx, ln, &h3srv.Config{}, h3srv.HandlerFunc(func(s *h3srv.Stream) { app.serve(nativeExchange{s}) }))
	}()
	t.Cleanup(func() {
		// Closing the socket ends the connections a client left open
		// (a killed browser sends no CONNECTION_CLOSE).
		cancel()
		ln.Close()
		pc.Close()
		<-done
	})
}

// serveTCP serves app over TLS (HTTP/2 and HTTP/1.1) on ln with riptide's
// server through the compat door.
func serveTCP(t *testing.T, app *interopApp, ln net.Listener, pki *interopPKI) {
	t.Helper()
	srv := &riptide.Server{
		Handler:   riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { app.serve(compatExchange{w, r}) })),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pki.tls}},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeTLS(ln, "", "")
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
}

// nativeExchange is a request through the native door.
type nativeExchange struct{ s *h3srv.Stream }

func (e nativeExchange) method() string  { return string(e.s.Request().Method) }
func (e nativeExchange) path() string    { return string(e.s.Request().Path) }
func (e nativeExchange) body() io.Reader { return e.s }
func (e nativeExchange) http3() bool {
	return e.s.Conn().QUIC().State().TLS.NegotiatedProtocol == "h3"
}

func (e nativeExchange) trailers() [][2]string {
	var out [][2]string
	for _, f := range e.s.Trailers() {
		out = append(out, [2]string{string(f.Name), string(f.Value)})
	}
	return out
}

func (e nativeExchange) respond(status int, header [][2]string, body []byte, trailers [][2]string) {
	hs := make([]h1.Header, 0, len(header)+1)
	for _, h := range header {
		hs = append(hs, h1.Header{Name: []byte(h[0]), Value: []byte(h[1])})
	}
	if status != 204 && status != 304 {
		hs = append(hs, h1.Header{Name: []byte("content-length"), Value: strconv.AppendInt(nil, int64(len(body)), 10)})
	}
	e.s.WriteHeaders(status, hs)
	if len(body) > 0 {
		e.s.WriteData(body)
	}
	if len(trailers) > 0 {
		ts := make([]h1.Header, len(trailers))
		for i, h := range trailers {
			ts[i] = h1.Header{Name: []byte(h[0]), Value: []byte(h[1])}
		}
		e.s.WriteTrailers(ts)
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
