package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
)

// heldClientEnv makes the test binary TestHeldStreamCost's client process,
// so that none of the client's allocations or goroutines is counted.
const heldClientEnv = "RIPTIDE_H3_HELD_CLIENT"

// Held streams per server: heldConns connections with heldPerConn
// requests each, below every server's stream limit.
const heldConns, heldPerConn = 10, 50

// heldStreamHeap bounds the live heap a held HTTP/3 stream costs Serve:
// its Ctx on a stream conn (no HTTP/1.1 write buffer), the engine's
// stream and quic-go's. It was 61 KiB with the Ctx on an HTTP/1.1 conn
// (64 KiB on the compat door), 24 and 27 KiB since; quic-go's
// http3.Server: 4.9 KiB.
const heldStreamHeap = 32 << 10

// TestHeldStreamCost measures what a request stream held by a waiting
// handler costs the server: live heap and goroutines per stream, for
// Serve's native and compat doors and for quic-go's http3.Server, with
// the client in a child process. The handlers wait on a channel (native)
// or on the request's context or a channel (compat, quic-go), as a
// long-poll handler does. A round opens heldConns connections, measures
// the heap after a GET on each, then holds heldConns*heldPerConn streams
// and measures again. It asserts that Serve holds one goroutine per stream
// at most (quic-go holds one; the compat door's request context is a
// callback on the stream's, not a goroutine) and at most heldStreamHeap
// of live heap per held stream.
func TestHeldStreamCost(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 500 streams per server in a child process")
	}
	if os.Getenv(heldClientEnv) != "" {
		t.Skip("the client process")
	}
	const n = heldConns * heldPerConn
	var entered atomic.Int64
	// release is the channel of the current round, swapped by measure
	// while the last round's handlers may still be reading it.
	var release atomic.Pointer[chan struct{}]
	first := make(chan struct{})
	release.Store(&first)
	native := riptide.HandlerFunc(func(x *riptide.Ctx) {
		if string(x.Path()) == "/wait" {
			ch := *release.Load()
			entered.Add(1)
			<-ch
		}
		x.Write(hello)
	})
	std := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			ch := *release.Load()
			entered.Add(1)
			select {
			case <-ch:
			case <-r.Context().Done():
			}
		}
		w.Write(hello)
	})
	srvNative, _ := startServe(t, &riptide.Server{Handler: native}, &Options{MaxStreams: 2 * heldPerConn})
	srvCompat, _ := startServe(t, &riptide.Server{Handler: riptide.FromHTTP(std)}, &Options{MaxStreams: 2 * heldPerConn})
	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{MaxIncomingStreams: 2 * heldPerConn})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: std}
	go qs.ServeListener(qln)
	t.Cleanup(func() { qs.Close() })

	in, outp := startChild(t, "TestHeldStreamClient", heldClientEnv+"=1")
	out := bufio.NewScanner(outp)
	read := func() string {
		for out.Scan() {
			if l, ok := strings.CutPrefix(out.Text(), "heldclient "); ok {
				return l
			}
		}
		t.Fatalf("client process: %v", out.Err())
		return ""
	}
	// measure holds n streams on addr and returns the live heap and the
	// goroutines they added, per stream.
	measure := func(addr string) (heap, goroutines float64) {
		fmt.Fprintln(in, "conns", addr)
		read()
		time.Sleep(idleSettle)
		h0, g0 := settledHeap(), runtime.NumGoroutine()
		entered.Store(0)
		fmt.Fprintln(in, "hold")
		for i := 0; entered.Load() < n && i < 2000; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		if k := entered.Load(); k < n {
			t.Fatalf("%d of %d handlers entered", k, n)
		}
		time.Sleep(200 * time.Millisecond) // the last streams' reads settle
		h1, g1 := settledHeap(), runtime.NumGoroutine()
		next := make(chan struct{})
		close(*release.Swap(&next))
		fmt.Fprintln(in, "close")
		read()
		return float64(h1-h0) / n, float64(g1-g0) / n
	}
	servers := []struct{ name, addr string }{
		{"quic-go http3.Server", qln.Addr().String()},
		{"Serve native", srvNative},
		{"Serve compat", srvCompat},
	}
	for _, s := range servers {
		measure(s.addr) // a first round: pools, goroutine descriptors
	}
	res := make(map[string][2]float64)
	for _, s := range servers {
		h, g := measure(s.addr)
		res[s.name] = [2]float64{h, g}
		t.Logf("%s: %.1f KiB live heap, %.2f goroutines per held stream (%d streams on %d connections)", s.name, h/1024, g, n, heldConns)
	}
	q := res["quic-go http3.Server"]
	for _, name := range []string{"Serve native", "Serve compat"} {
		r := res[name]
		if r[1] > 1.05 {
			t.Errorf("%s: %.2f goroutines per held stream, want at most one (quic-go: %.2f)", name, r[1], q[1])
		}
		if r[0] > heldStreamHeap {
			t.Errorf("%s: %.1f KiB per held stream, want at most %d KiB (quic-go: %.1f KiB)", name, r[0]/1024, heldStreamHeap>>10, q[0]/1024)
		}
	}
}

// settledHeap is the live heap after collections.
func settledHeap() int64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestHeldStreamClient is TestHeldStreamCost's client: "conns ADDR" opens
// heldConns connections to ADDR with a GET each; "hold" sends heldPerConn
// requests for /wait on each, which wait; "close" waits for their answers
// and closes the connections. It answers each command with one line.
func TestHeldStreamClient(t *testing.T) {
	if os.Getenv(heldClientEnv) == "" {
		t.Skip("TestHeldStreamCost's client process")
	}
	var (
		addr    string
		clients []*http.Client
		trs     []*qhttp3.Transport
		wg      sync.WaitGroup
	)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch f[0] {
		case "conns":
			addr = f[1]
			for range heldConns {
				tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}}
				c := &http.Client{Transport: tr}
				resp, err := c.Get("https://" + addr + "/hello")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				clients, trs = append(clients, c), append(trs, tr)
			}
			fmt.Println("heldclient ok")
		case "hold":
			for _, c := range clients {
				for range heldPerConn {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/wait", nil)
						if resp, err := c.Do(req); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				}
			}
		case "close":
			wg.Wait()
			for _, tr := range trs {
				tr.Close()
			}
			clients, trs = nil, nil
			fmt.Println("heldclient ok")
		}
	}
}
