package riptide

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveCompat serves h through FromHTTP on a loopback listener until the
// test ends and returns the address.
func serveCompat(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := &Server{Handler: FromHTTP(h), Logger: slog.New(slog.DiscardHandler)}
	return serveTest(t, srv, testServeOptions{}).Addr
}

// dialRaw opens a raw connection with a deadline bounding the test.
func dialRaw(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return nc, bufio.NewReader(nc)
}

func readResponse(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestCompatContextCancelledOnDisconnect(t *testing.T) {
	t.Parallel()
	cancelled := make(chan error, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- r.Context().Err()
		case <-time.After(10 * time.Second):
			cancelled <- errors.New("not cancelled")
		}
	}))
	nc, _ := dialRaw(t, addr)
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(10 * time.Millisecond) // let the handler start waiting; not a threshold
	nc.Close()
	if err := <-cancelled; err != context.Canceled {
		t.Fatalf("handler saw %v, want context.Canceled", err)
	}
}

func TestCompatContextCancelledAfterReturn(t *testing.T) {
	t.Parallel()
	kept := make(chan context.Context, 2)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/watched" {
			<-time.After(0)
			_ = r.Context().Done() // starts the watch during the request
		}
		kept <- r.Context()
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	for _, p := range []string{"/plain", "/watched"} {
		io.WriteString(nc, "GET "+p+" HTTP/1.1\r\nHost: x\r\n\r\n")
		readResponse(t, br)
		ctx := <-kept
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: context not cancelled after the handler returned", p)
		}
		if ctx.Err() != context.Canceled {
			t.Errorf("%s: Err = %v", p, ctx.Err())
		}
	}
	// The connection still serves.
	io.WriteString(nc, "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := readResponse(t, br); body != "ok" {
		t.Errorf("after: %q", body)
	}
	<-kept
}

// A goroutine watching the request's Context must not be blocked by the
// handler reading a slow body: Done never waits for the body read.
func TestCompatDoneDoesNotWaitForBodyRead(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		watchdog := make(chan struct{})
		go func() {
			defer close(watchdog)
			_ = r.Context().Done() // must return while the handler reads
		}()
		var b [5]byte
		n, _ := io.ReadFull(r.Body, b[:]) // blocks until the client sends
		<-watchdog
		got <- string(b[:n])
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
	time.Sleep(20 * time.Millisecond) // the handler is now blocked in Read; not a threshold
	io.WriteString(nc, "hello")
	select {
	case s := <-got:
		if s != "hello" {
			t.Errorf("body %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler stuck")
	}
	readResponse(t, br)
}

// Context().Done called from another goroutine while the handler runs, and
// body reads and writes on the handler's goroutine: the race detector
// checks the locking.
func TestCompatConcurrentDone(t *testing.T) {
	t.Parallel()
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-r.Context().Done()
			}()
		}
		io.Copy(w, r.Body)
		w.(http.Flusher).Flush()
		go wg.Wait()
	}))
	nc, br := dialRaw(t, addr)
	for range 20 {
		io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
		if _, body := readResponse(t, br); body != "abc" {
			t.Fatalf("body %q", body)
		}
	}
}

// A handler may keep the request after returning, as with net/http: nothing
// it references is reused by later requests on the connection.
func TestCompatRequestMayBeKept(t *testing.T) {
	t.Parallel()
	kept := make(chan *http.Request, 3)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kept <- r
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	var reqs []*http.Request
	for i, p := range []string{"/first?a=1", "/second?b=2", "/third"} {
		io.WriteString(nc, "POST "+p+" HTTP/1.1\r\nHost: h"+string(rune('0'+i))+"\r\nX-N: "+p+"\r\nContent-Length: 3\r\n\r\nxyz")
		readResponse(t, br)
		reqs = append(reqs, <-kept)
	}
	for i, p := range []string{"/first?a=1", "/second?b=2", "/third"} {
		r := reqs[i]
		if r.RequestURI != p || r.URL.String() != p || r.Header.Get("X-N") != p || r.Host != "h"+string(rune('0'+i)) {
			t.Errorf("kept request %d changed: %s %s %q %s", i, r.RequestURI, r.URL, r.Header.Get("X-N"), r.Host)
		}
		if _, err := r.Body.Read(make([]byte, 1)); err != http.ErrBodyReadAfterClose {
			t.Errorf("body read after return: %v, want ErrBodyReadAfterClose", err)
		}
	}
}

// After Hijack the request Context stays live until ServeHTTP returns (a
// websocket handler keeps using it), and the hijacked connection carries
// the bytes the client sent after the head.
func TestCompatHijackKeepsContext(t *testing.T) {
	t.Parallel()
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := r.Context().Done()
		w.Header().Set("Upgrade", "echo")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		select {
		case <-done:
			t.Error("context cancelled by Hijack")
		default:
		}
		if _, err := w.Write([]byte("x")); err != http.ErrHijacked {
			t.Errorf("Write after Hijack: %v", err)
		}
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nping\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 101 || res.Header.Get("Upgrade") != "echo" {
		t.Fatalf("got %d %v", res.StatusCode, res.Header)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "echo: ping\n" {
		t.Fatalf("after hijack: %q %v", line, err)
	}
}

func TestCompatTLS(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.StartTLS() // for its certificate and a client that trusts it
	defer ts.Close()
	srv := &Server{Handler: FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || !r.TLS.HandshakeComplete {
			http.Error(w, "no TLS state", 500)
			return
		}
		io.WriteString(w, "tls ok "+tls.VersionName(r.TLS.Version))
	})), Logger: slog.New(slog.DiscardHandler)}
	// A tls.Listener served with Serve, not ServeTLS.
	rs := serveTest(t, srv, testServeOptions{Wrap: func(ln net.Listener) net.Listener {
		return tls.NewListener(ln, &tls.Config{Certificates: ts.TLS.Certificates})
	}})
	c := ts.Client()
	res, err := c.Get("https://" + rs.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(string(b), "tls ok TLS 1.3") {
		t.Errorf("got %d %q", res.StatusCode, b)
	}
}

// The request's Context is found by context.WithCancel as a parent, so
// middleware deriving contexts works and sees the cancellation.
func TestCompatDerivedContext(t *testing.T) {
	t.Parallel()
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Hour)
		defer cancel()
		if ctx.Value(http.LocalAddrContextKey) == nil {
			t.Error("LocalAddrContextKey missing")
		}
		if r.Context() != r.WithContext(r.Context()).Context() {
			t.Error("context not kept by WithContext")
		}
		go func() {
			<-ctx.Done()
		}()
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := readResponse(t, br); body != "ok" {
		t.Fatalf("%q", body)
	}
}
