package riptide

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestDrain: after Drain the readiness handlers (both doors) answer 503,
// idle keep-alive connections are closed at once, an in-flight request's
// response carries Connection: close and its connection closes, and new
// connections are still served.
func TestDrain(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	srv := &Server{}
	compatReady := FromHTTP(srv.ReadyHTTPHandler())
	srv, addr := startServer(t, srv, func(x *Ctx) {
		switch string(x.Path()) {
		case "/ready":
			srv.ReadyHandler().ServeCtx(x)
		case "/ready-compat":
			compatReady.ServeCtx(x)
		case "/slow":
			close(started)
			<-release
			hello(x)
		default:
			hello(x)
		}
	})
	probe := func(path string, want int, wantClose bool) {
		t.Helper()
		rc := dial(t, addr)
		rc.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := rc.resp("GET")
		if resp.StatusCode != want || resp.Close != wantClose {
			t.Errorf("%s: %d %q close=%v, want %d close=%v", path, resp.StatusCode, body, resp.Close, want, wantClose)
		}
	}
	probe("/ready", 200, false)
	probe("/ready-compat", 200, false)

	idle := dial(t, addr)
	idle.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := idle.resp("GET"); resp.Close {
		t.Fatal("keep-alive response before Drain has Connection: close")
	}
	active := dial(t, addr)
	active.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started

	srv.Drain()
	if !srv.Draining() {
		t.Error("Draining() = false after Drain")
	}
	if !idle.closed() {
		t.Error("idle keep-alive connection not closed by Drain")
	}
	close(release)
	if resp, _ := active.resp("GET"); !resp.Close || resp.StatusCode != 200 {
		t.Errorf("in-flight response: %d close=%v, want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	if !active.closed() {
		t.Error("in-flight connection not closed after its response")
	}
	probe("/ready", 503, true)
	probe("/ready-compat", 503, true)
	probe("/", 200, true)
}

// TestMaxConnAge: a keep-alive connection is closed, with Connection:
// close on its response, at its first request after MaxConnAge; without
// the limit the same loop keeps the connection.
func TestMaxConnAge(t *testing.T) {
	t.Parallel()
	for _, age := range []time.Duration{time.Second, 0} {
		_, addr := startServer(t, &Server{MaxConnAge: age}, hello)
		rc := dial(t, addr)
		end := time.Now().Add(2500 * time.Millisecond)
		closed := false
		for n := 0; time.Now().Before(end); n++ {
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, _ := rc.resp("GET")
			if resp.Close {
				closed = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if closed != (age > 0) {
			t.Errorf("MaxConnAge %v: connection closed = %v", age, closed)
		}
		if closed && !rc.closed() {
			t.Error("Connection: close sent but the connection stayed open")
		}
	}
}

// TestDrainHTTP2: Drain sends an idle HTTP/2 connection GOAWAY and it
// closes, while the listener still serves new ones.
func TestDrainHTTP2(t *testing.T) {
	t.Parallel()
	srv, addr := startServer(t, &Server{HTTP2: &HTTP2Config{H2C: true}}, hello)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func() {
		t.Helper()
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over %s", resp.Proto)
		}
	}
	get()
	waitStats(t, srv, "one open HTTP/2 connection", func(st *Stats) bool { return st.ConnsActive == 1 })
	srv.Drain()
	waitStats(t, srv, "the HTTP/2 connection closed", func(st *Stats) bool { return st.ConnsActive == 0 && st.Closed == 1 })
	// The client may not have read the drained connection's GOAWAY and
	// end yet (a request on it fails with a broken pipe): drop it.
	tr.CloseIdleConnections()
	get() // a new connection, still accepted
}

// h2cRecorder is an h2c client (http.Transport, prior knowledge) that
// counts the connections it dials and records what each one read, so a
// test can look for the server's GOAWAY.
type h2cRecorder struct {
	mu    sync.Mutex
	conns []*recordedConn
	tr    *http.Transport
}

type recordedConn struct {
	net.Conn
	mu   sync.Mutex
	read []byte
}

func (c *recordedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read = append(c.read, p[:n]...)
	c.mu.Unlock()
	return n, err
}

func newH2CRecorder(t *testing.T) *h2cRecorder {
	r := &h2cRecorder{}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	r.tr = &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		rc := &recordedConn{Conn: nc}
		r.mu.Lock()
		r.conns = append(r.conns, rc)
		r.mu.Unlock()
		return rc, nil
	}}
	t.Cleanup(r.tr.CloseIdleConnections)
	return r
}

func (r *h2cRecorder) dials() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

// get fetches url over HTTP/2 and returns the body.
func (r *h2cRecorder) get(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Transport: r.tr, Timeout: 20 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: body: %v", url, err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("%s: served over %s", url, resp.Proto)
	}
	return string(b)
}

// goAways returns the GOAWAY frames connection i has read so far.
func (r *h2cRecorder) goAways(i int) []*http2.GoAwayFrame {
	r.mu.Lock()
	rc := r.conns[i]
	r.mu.Unlock()
	rc.mu.Lock()
	b := bytes.Clone(rc.read)
	rc.mu.Unlock()
	fr := http2.NewFramer(nil, bytes.NewReader(b))
	var out []*http2.GoAwayFrame
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return out
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			out = append(out, g)
		}
	}
}

// remoteHandler answers each request with the client's address, so that
// a test can tell connections apart; /slow first waits for release. Both
// doors.
func remoteHandlers(started chan<- struct{}, release <-chan struct{}) map[string]Handler {
	return map[string]Handler{
		"native": HandlerFunc(func(x *Ctx) {
			if string(x.Path()) == "/slow" {
				started <- struct{}{}
				<-release
			}
			x.WriteString(x.RemoteAddr().String())
		}),
		"compat": FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				started <- struct{}{}
				<-release
			}
			io.WriteString(w, r.RemoteAddr)
		})),
	}
}

// TestMaxConnAgeHTTP2: an HTTP/2 connection that reaches MaxConnAge with a
// request in flight is sent GOAWAY naming that stream as the last; the
// client's next request goes over a new connection, the request in flight
// completes, and then the old connection closes.
func TestMaxConnAgeHTTP2(t *testing.T) {
	t.Parallel()
	for _, door := range []string{"native", "compat"} {
		t.Run(door, func(t *testing.T) {
			started, release := make(chan struct{}, 1), make(chan struct{})
			srv := &Server{HTTP2: &HTTP2Config{H2C: true}, MaxConnAge: time.Second,
				Handler: remoteHandlers(started, release)[door]}
			srv, addr := startServer(t, srv, nil)
			// Registered after the server's cleanup, so it runs first: a
			// failure before the release below ends the test instead of
			// leaving Close waiting for the blocked handler.
			unblock := sync.OnceFunc(func() { close(release) })
			t.Cleanup(unblock)
			cl := newH2CRecorder(t)
			first := cl.get(t, "http://"+addr+"/") // stream 1
			slow := make(chan string, 1)
			go func() {
				resp, err := (&http.Client{Transport: cl.tr, Timeout: 20 * time.Second}).Get("http://" + addr + "/slow")
				if err != nil {
					slow <- err.Error()
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					slow <- err.Error()
					return
				}
				slow <- string(b)
			}()
			<-started // stream 3 is in flight on the first connection
			// The connection reaches its age with stream 3 open.
			deadline := time.Now().Add(10 * time.Second)
			for len(cl.goAways(0)) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("no GOAWAY on the first connection")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if g := cl.goAways(0)[0]; g.LastStreamID != 3 || g.ErrCode != http2.ErrCodeNo {
				t.Errorf("GOAWAY last stream %d, code %v; want 3, NO_ERROR", g.LastStreamID, g.ErrCode)
			}
			// A new request goes over a new connection.
			second := cl.get(t, "http://"+addr+"/")
			if second == first || cl.dials() != 2 {
				t.Errorf("after GOAWAY: served from %s (first connection %s), %d dials", second, first, cl.dials())
			}
			unblock()
			if got := <-slow; got != first {
				t.Errorf("the request in flight got %q, want its connection's address %s", got, first)
			}
			waitStats(t, srv, "the first connection closed", func(st *Stats) bool { return st.Closed >= 1 })
			if st := waitStats(t, srv, "3 requests", func(st *Stats) bool { return st.Requests == 3 }); st.Accepted < 2 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestMaxRequestsPerConnHTTP2: the stream that reaches MaxRequestsPerConn
// is the last of its connection: GOAWAY names it, it is answered, and the
// next request opens a new connection.
func TestMaxRequestsPerConnHTTP2(t *testing.T) {
	t.Parallel()
	for _, door := range []string{"native", "compat"} {
		t.Run(door, func(t *testing.T) {
			srv := &Server{HTTP2: &HTTP2Config{H2C: true}, MaxRequestsPerConn: 3,
				Handler: remoteHandlers(nil, nil)[door]}
			srv, addr := startServer(t, srv, nil)
			cl := newH2CRecorder(t)
			var got []string
			for range 7 {
				got = append(got, cl.get(t, "http://"+addr+"/"))
			}
			for i := range got {
				if same := got[i] == got[i/3*3]; !same {
					t.Errorf("request %d served from %s, its connection's first from %s", i, got[i], got[i/3*3])
				}
				if i%3 == 0 && i > 0 && got[i] == got[i-1] {
					t.Errorf("request %d served on the connection that had served 3 already (%s)", i, got[i])
				}
			}
			if cl.dials() != 3 {
				t.Fatalf("%d connections for 7 requests, want 3", cl.dials())
			}
			for i := range 2 {
				if g := cl.goAways(i); len(g) == 0 || g[0].LastStreamID != 5 || g[0].ErrCode != http2.ErrCodeNo {
					t.Errorf("connection %d: GOAWAY %v, want last stream 5 (the third), NO_ERROR", i, g)
				}
			}
			waitStats(t, srv, "two connections closed", func(st *Stats) bool { return st.Closed == 2 && st.Requests == 7 })
		})
	}
}
