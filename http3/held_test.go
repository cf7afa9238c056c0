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

// heldStreamHeap bounds the live heap a stream held by a waiting handler
// costs Serve: its Ctx on a stream conn (no HTTP/1.1 write buffer), the
// engine's stream (no buffer while nothing is read or written) and
// quic-go's. It was 61 KiB with the Ctx on an HTTP/1.1 conn (64 KiB on
// the compat door), 24 and 27 KiB on a stream conn with the engine's
// buffers held, 9.6 and 12.6 KiB with them lent, 6.7 and 9.7 KiB (10.7
// under -race) with the stream conn's header storage for 16 fields
// (h1.Request's 64 inline fields were 3.5 KiB) and without the goroutine
// engine's sendfile state and TLS idle buffer (a 2 KiB conn), 4.8 and 7.1
// KiB (7.2 under -race) with the head's copy and header storage made to
// the head's size, the engine's request head in its pooled field buffers
// and the compat writer's sniff buffer and send lock made when used;
// quic-go's http3.Server: 4.9 KiB.
const heldStreamHeap = 10 << 10

// heldRatio bounds a held stream's live heap on Serve as a multiple of
// quic-go's http3.Server's in the same run, per case (waiting handler,
// client not reading) and door. Issue 36 asks 1.5, which both doors hold
// waiting (native 0.98, compat 1.45). The compat door was 2.8 times with
// the Ctx's 64 inline header fields (a CI run failed its old bound, 2.75,
// by 0.2 KiB under -race) and 2.0 to 2.2 without them; what it holds above
// native (2.3 KiB) is the *http.Request with its URL, Context and Body in
// one 768-byte block, its Header map (0.4 KiB), the request Context a
// waiting handler asks for (its cancel context and Done channel, and the
// callback on the stream's context, 0.6 KiB with what context.AfterFunc
// adds to the stream's) and the compat writer's state (288 bytes).
//
// A stalled stream ("stall") may hold, beyond that, the response body its
// blocked write buffers (riptide.DefaultWriteBufferSize: the Ctx holds the
// handler's first bytes until it commits, so that a response written in
// one call gets its Content-Length; quic-go commits after 4 KiB) and its
// share of the client's connection window; stallExtra is that allowance.
// A ratio of two measured figures alone flaked here (29.9 KiB against
// quic-go's 5.0, 1 run in 4).
//
// With WriteBufferSize at quicGoCommit, what quic-go buffers before it
// commits, a stalled stream holds no more than 1.5 times quic-go's either:
// the stall allowance is the default buffer's, not the engine's.
var heldRatio = map[string]float64{
	"Serve native":                     1.5,
	"Serve compat":                     1.5,
	"Serve native, 4 KiB write buffer": 1.5,
	"Serve compat, 4 KiB write buffer": 1.5,
}

// quicGoCommit is what quic-go's http3.Server buffers of a response body
// before it sends the head.
const quicGoCommit = 4 << 10

const stallExtra = riptide.DefaultWriteBufferSize + stallConnWindow/heldPerConn

// stallChunk is what a /stall handler writes at a time, stallBody what it
// writes in all: more than the client's flow-control windows let out, so
// that every /stall handler ends up blocked in a write.
const stallChunk, stallBody = 16 << 10, 4 << 20

// The client's flow-control windows, fixed (not auto-tuned): what a
// server may have sent on a stream and on a connection that the client
// has not read. They bound the response bytes in flight, 64 KiB per
// connection (1.3 KiB per held stream here), and make every /stall
// handler block at its first flush, whatever the machine's speed.
const stallStreamWindow, stallConnWindow = 8 << 10, 64 << 10

// TestHeldStreamCost measures what a held request stream costs the
// server: live heap and goroutines per stream, for Serve's native and
// compat doors and for quic-go's http3.Server, with the client in a child
// process. Two cases: "wait", a handler that waits on a channel (native)
// or on the request's context or a channel (compat, quic-go), as a
// long-poll handler does; "stall", a handler writing a large body to a
// client that reads the response head and then stops reading, so that the
// handler blocks in a write once the client's flow-control windows are
// spent (what the server then holds per stream is what the blocked write
// holds, its buffered body, beside the stream; the window's bytes were
// sent and acknowledged). A round opens heldConns connections, measures
// the heap after a GET on each, then holds heldConns*heldPerConn streams
// and measures again. It asserts that Serve holds at most 1.05 goroutines
// per stream (quic-go holds one; the compat door's request context is a
// callback on the stream's, not a goroutine), at most heldRatio times
// quic-go's live heap per held stream in the same run, and, waiting, at
// most heldStreamHeap.
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
	chunk := make([]byte, stallChunk)
	// stall writes stallBody bytes with write until it fails or the
	// round ends.
	stall := func(write func([]byte) error) {
		ch := *release.Load()
		entered.Add(1)
		for range stallBody / stallChunk {
			select {
			case <-ch:
				return
			default:
			}
			if write(chunk) != nil {
				return
			}
		}
	}
	native := riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/wait":
			ch := *release.Load()
			entered.Add(1)
			<-ch
		case "/stall":
			stall(func(p []byte) error { _, err := x.Write(p); return err })
			return
		}
		x.Write(hello)
	})
	std := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			ch := *release.Load()
			entered.Add(1)
			select {
			case <-ch:
			case <-r.Context().Done():
			}
		case "/stall":
			stall(func(p []byte) error { _, err := w.Write(p); return err })
			return
		}
		w.Write(hello)
	})
	srvNative, _ := startServe(t, &riptide.Server{Handler: native}, &Options{MaxStreams: 2 * heldPerConn})
	srvCompat, _ := startServe(t, &riptide.Server{Handler: riptide.FromHTTP(std)}, &Options{MaxStreams: 2 * heldPerConn})
	// The same doors buffering what quic-go's does before it commits.
	srvNative4, _ := startServe(t, &riptide.Server{Handler: native, WriteBufferSize: quicGoCommit}, &Options{MaxStreams: 2 * heldPerConn})
	srvCompat4, _ := startServe(t, &riptide.Server{Handler: riptide.FromHTTP(std), WriteBufferSize: quicGoCommit}, &Options{MaxStreams: 2 * heldPerConn})
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
	// measure holds n streams on addr ("wait" or "stall") and returns the
	// live heap and the goroutines they added, per stream.
	measure := func(addr, hold string) (heap, goroutines float64) {
		fmt.Fprintln(in, "conns", addr)
		read()
		time.Sleep(idleSettle)
		h0, g0 := settledHeap(), runtime.NumGoroutine()
		entered.Store(0)
		fmt.Fprintln(in, "hold", hold)
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
		{"Serve native, 4 KiB write buffer", srvNative4},
		{"Serve compat, 4 KiB write buffer", srvCompat4},
	}
	for _, hold := range []string{"wait", "stall"} {
		for _, s := range servers {
			measure(s.addr, hold) // a first round: pools, goroutine descriptors
		}
		res := make(map[string][2]float64)
		for _, s := range servers {
			h, g := measure(s.addr, hold)
			res[s.name] = [2]float64{h, g}
			t.Logf("%s, %s: %.1f KiB live heap, %.2f goroutines per held stream (%d streams on %d connections)", hold, s.name, h/1024, g, n, heldConns)
		}
		q := res["quic-go http3.Server"]
		for _, s := range servers[1:] {
			name := s.name
			r := res[name]
			if r[1] > 1.05 {
				t.Errorf("%s, %s: %.2f goroutines per held stream, want at most one (quic-go: %.2f)", hold, name, r[1], q[1])
			}
			max, extra := heldRatio[name], 0.0
			if hold == "stall" && !strings.HasSuffix(name, "4 KiB write buffer") {
				extra = stallExtra
			}
			if r[0] > max*q[0]+extra {
				t.Errorf("%s, %s: %.1f KiB per held stream, want at most %.2f times quic-go's %.1f KiB plus %.1f KiB", hold, name, r[0]/1024, max, q[0]/1024, extra/1024)
			}
			if hold == "wait" && r[0] > heldStreamHeap {
				t.Errorf("%s, %s: %.1f KiB per held stream, want at most %d KiB (quic-go: %.1f KiB)", hold, name, r[0]/1024, heldStreamHeap>>10, q[0]/1024)
			}
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
// heldConns connections to ADDR with a GET each; "hold wait" sends
// heldPerConn requests for /wait on each, which wait; "hold stall" sends
// as many for /stall and reads none of their bodies; "close" waits for
// the /wait answers (or drops the /stall bodies unread) and closes the
// connections. It answers "conns" and "close" with one line.
func TestHeldStreamClient(t *testing.T) {
	if os.Getenv(heldClientEnv) == "" {
		t.Skip("TestHeldStreamCost's client process")
	}
	var (
		addr    string
		clients []*http.Client
		trs     []*qhttp3.Transport
		wg      sync.WaitGroup
		stop    chan struct{}
	)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch f[0] {
		case "conns":
			addr = f[1]
			for range heldConns {
				tr := &qhttp3.Transport{
					TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}},
					QUICConfig: &quic.Config{
						InitialStreamReceiveWindow:     stallStreamWindow,
						MaxStreamReceiveWindow:         stallStreamWindow,
						InitialConnectionReceiveWindow: stallConnWindow,
						MaxConnectionReceiveWindow:     stallConnWindow,
					},
				}
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
			stop = make(chan struct{})
			stalled := f[1] == "stall"
			for _, c := range clients {
				for range heldPerConn {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/"+f[1], nil)
						resp, err := c.Do(req)
						if err != nil {
							return
						}
						if stalled {
							<-stop
						} else {
							io.Copy(io.Discard, resp.Body)
						}
						resp.Body.Close()
					}()
				}
			}
		case "close":
			close(stop)
			wg.Wait()
			for _, tr := range trs {
				tr.Close()
			}
			clients, trs = nil, nil
			fmt.Println("heldclient ok")
		}
	}
}
