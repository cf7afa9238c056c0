package http3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
)

// allocStreams is the number of requests the client keeps in flight on
// each connection, as a load generator does: the per-packet costs (ACKs,
// packet buffers) are then shared by several requests, as they are under
// load, instead of each sequential request paying a round of its own.
const allocStreams = 4

// allocClientEnv names the servers' addresses for the client process of
// TestServeAllocs.
const allocClientEnv = "RIPTIDE_H3_ALLOC_CLIENT"

// TestServeAllocs measures server allocations per request over loopback
// QUIC, with the client in another process (this test binary, run as
// TestAllocClientProcess) so that only the server's allocations are
// counted: quic-go's bare-stream floor (a do-nothing stream handler
// writing a fixed response), Serve with a native hello handler, Serve
// with the same as a compat handler (FromHTTP), and quic-go's
// http3.Server, all with the same client, in interleaved rounds. Targets
// (issue 25): native at most floor + 2, compat at most 40. (The engine
// alone allocates nothing per request: internal/h3srv's
// TestEngineAllocs.)
func TestServeAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts in -short mode or under the race detector are not pinned")
	}
	type row struct {
		name string
		addr string
		got  []float64
	}
	var rows []*row

	// The floor serves the response captured from Serve's native row.
	native, _ := startServe(t, &riptide.Server{Handler: nativeHello}, nil)
	resp := slices.Clone(dialRaw(t, native).do(t))
	ln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), floorQUICConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serveFloor(ln, resp)
	rows = append(rows, &row{name: "quic-go bare-stream floor", addr: ln.Addr().String()})
	rows = append(rows, &row{name: "Serve, native Ctx", addr: native})
	compat := &riptide.Server{Handler: riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(hello)
	}))}
	addr, _ := startServe(t, compat, nil)
	rows = append(rows, &row{name: "Serve, compat door", addr: addr})

	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "13")
		w.Write(hello)
	})}
	go qs.ServeListener(qln)
	t.Cleanup(func() { qs.Close() })
	rows = append(rows, &row{name: "quic-go http3.Server", addr: qln.Addr().String()})

	addrs := make([]string, len(rows))
	for i, r := range rows {
		addrs[i] = r.addr
	}
	in, outPipe := startChild(t, "TestAllocClientProcess", allocClientEnv+"="+strings.Join(addrs, ","))
	out := bufio.NewReader(outPipe)
	// run asks the client for n requests to server i and waits for them.
	run := func(i, n int) {
		t.Helper()
		fmt.Fprintf(in, "%d %d\n", i, n)
		line, err := out.ReadString('\n')
		for err == nil && !strings.HasPrefix(line, "done") {
			line, err = out.ReadString('\n') // the test framework's own lines
		}
		if err != nil || strings.TrimSpace(line) != "done" {
			t.Fatalf("client: %q, %v", line, err)
		}
	}

	const rounds, n = 7, 300
	for range rounds {
		for i, r := range rows {
			run(i, 20) // warm up
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			run(i, n)
			runtime.ReadMemStats(&after)
			r.got = append(r.got, float64(after.Mallocs-before.Mallocs)/n)
		}
	}
	med := make([]float64, len(rows))
	for i, r := range rows {
		slices.Sort(r.got)
		med[i] = r.got[rounds/2]
		t.Logf("server allocs per request, median of %d rounds of %d: %-26s %6.2f  rounds %.2f", rounds, n, r.name, med[i], r.got)
	}
	floor, nat, cpt := med[0], med[1], med[2]
	if nat > floor+2 {
		t.Errorf("native Ctx: %.2f allocs per request, floor %.2f: more than floor + 2", nat, floor)
	}
	if cpt > 40 {
		t.Errorf("compat door: %.2f allocs per request, more than 40", cpt)
	}
}

// nativeHello is a hello handler on the native API.
var nativeHello = riptide.HandlerFunc(func(x *riptide.Ctx) {
	x.SetContentType("text/plain")
	x.Write(hello)
})

// TestAllocClientProcess is TestServeAllocs' client, run in a process of
// its own: it reads "server n" lines and makes n requests to that server
// on one connection each, answering "done".
func TestAllocClientProcess(t *testing.T) {
	env := os.Getenv(allocClientEnv)
	if env == "" {
		t.Skip("the client of TestServeAllocs, run by it")
	}
	var clients []*rawClient
	for _, a := range strings.Split(env, ",") {
		if _, err := net.ResolveUDPAddr("udp", a); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, dialRaw(t, a))
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("bad command %q", sc.Text())
		}
		i, _ := strconv.Atoi(f[0])
		n, _ := strconv.Atoi(f[1])
		// allocStreams requests in flight on the connection, each
		// worker with its own buffers.
		var wg sync.WaitGroup
		var bad atomic.Int32
		for w := range allocStreams {
			c := &rawClient{qc: clients[i].qc, req: clients[i].req, buf: make([]byte, 4096)}
			wg.Go(func() {
				for range n/allocStreams + min(1, max(0, n%allocStreams-w)) {
					if got := c.do(t); !bytes.Contains(got, hello) {
						bad.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if bad.Load() > 0 {
			t.Fatalf("server %d: %d wrong answers", i, bad.Load())
		}
		io.WriteString(os.Stdout, "done\n")
	}
}
