package http3

import (
	"crypto/tls"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/quicx/quicxtest"
)

// idleCost opens n connections to addr with quic-go's HTTP/3 client, one
// GET each, and returns the goroutines and live heap they add while idle
// (client and server together, both in this process).
func idleCost(t *testing.T, addr string, n int) (goroutines, heap float64) {
	t.Helper()
	g0, h0 := runtime.NumGoroutine(), quicxtest.LiveHeap()
	trs := make([]*qhttp3.Transport, n)
	for i := range trs {
		trs[i] = &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}}
		resp, err := (&http.Client{Transport: trs[i]}).Get("https://" + addr + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(100 * time.Millisecond) // let the handshakes' last packets settle
	g1, h1 := runtime.NumGoroutine(), quicxtest.LiveHeap()
	for _, tr := range trs {
		tr.Close()
	}
	// Both sides' goroutines end before the next measurement starts.
	for i := 0; runtime.NumGoroutine() > g0; i++ {
		if i == 500 {
			t.Fatalf("%d goroutines after closing, %d before", runtime.NumGoroutine(), g0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return float64(g1-g0) / float64(n), float64(int64(h1)-int64(h0)) / float64(n)
}

// TestIdleConnCost reports what an idle HTTP/3 connection costs, client
// and server together, on the engine, through Serve and on quic-go's
// http3.Server with
// the same client; the difference is the servers'. It asserts that the
// goroutines of both sides end when the connections close (idleCost); the
// engine's own goroutines per idle connection are bounded in
// internal/h3srv's TestIdleGoroutines.
func TestIdleConnCost(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 50 connections")
	}
	const n = 50
	addr := startEngine(t, nil, &testHandler{})
	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(hello) })}
	go qs.ServeListener(qln)
	defer qs.Close()
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.Write(hello) })}
	saddr, _ := startServe(t, srv, nil)
	// One request first: Serve's own goroutines (quic-go's listener, the
	// server's clock) have started once it is answered, and are not a
	// connection's.
	if resp, err := h3Client(t).Get("https://" + saddr + "/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	eg, eh := idleCost(t, addr, n)
	sg, sh := idleCost(t, saddr, n)
	qg, qh := idleCost(t, qln.Addr().String(), n)
	t.Logf("per idle connection, client and server: engine %.1f goroutines %.1f KiB, Serve (native Ctx) %.1f goroutines %.1f KiB, quic-go http3.Server %.1f goroutines %.1f KiB",
		eg, eh/1024, sg, sh/1024, qg, qh/1024)
}
