package riptide

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestDrain: after Drain the readiness handlers (both doors) answer 503,
// idle keep-alive connections are closed at once, an in-flight request's
// response carries Connection: close and its connection closes, and new
// connections are still served.
func TestDrain(t *testing.T) {
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
	get() // a new connection, still accepted
}
