package riptide

import (
	"bufio"
	"bytes"
	"encoding/json"
	"expvar"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/internal/israce"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// statsServer serves statsHandlers' native door: /panic panics, /missing
// answers 404, anything else "Hello" and the length of the body it read.
func statsServer(t *testing.T, srv *Server) (*Server, string) {
	if srv == nil {
		srv = &Server{}
	}
	srv.Handler = statsHandlers()["native"]
	return startServer(t, srv, nil)
}

func waitStats(t *testing.T, srv *Server, what string, cond func(*Stats) bool) *Stats {
	t.Helper()
	var st Stats
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		srv.Stats(&st)
		if cond(&st) {
			return &st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: stats %+v", what, st)
		}
	}
}

// TestStatsCounts: each kind of event lands in its counter.
func TestStatsCounts(t *testing.T) {
	t.Parallel()
	srv, addr := statsServer(t, &Server{ReadHeaderTimeout: 300 * time.Millisecond})
	ka := dial(t, addr)
	for _, path := range []string{"/", "/", "/missing"} {
		ka.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		ka.resp("GET")
	}
	waitStats(t, srv, "one idle connection", func(st *Stats) bool { return st.ConnsIdle == 1 })

	p := dial(t, addr)
	p.send("GET /panic HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := p.resp("GET"); resp.StatusCode != 500 {
		t.Fatalf("panic: %d", resp.StatusCode)
	}
	bad := dial(t, addr)
	bad.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n")
	if resp, _ := bad.resp("GET"); resp.StatusCode != 400 {
		t.Fatalf("bad header: %d", resp.StatusCode)
	}
	slow := dial(t, addr)
	slow.send("GET / HTTP/1.1\r\n")
	if resp, _ := slow.resp("GET"); resp.StatusCode != 408 {
		t.Fatalf("slow head: %d", resp.StatusCode)
	}
	st := waitStats(t, srv, "three connections closed", func(st *Stats) bool { return st.Closed == 3 })

	want := Stats{Accepted: 4, Closed: 3, ConnsIdle: 1, Requests: 4, Panics: 1,
		Responses:   [5]uint64{0, 2, 0, 3, 1}, // 200 200 | 404 400 408 | 500
		ParseErrors: ParseErrors{BadRequest: 1}, Timeouts: Timeouts{Header: 1}}
	got := *st
	got.BytesIn, got.BytesOut, got.Duration = 0, 0, Histogram{}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if st.BytesIn < 100 || st.BytesOut < 100 {
		t.Errorf("bytes in %d, out %d", st.BytesIn, st.BytesOut)
	}
	h := st.Duration
	if h.Count != st.Requests || h.Sum <= 0 || h.Buckets[len(h.Buckets)-1] > h.Count {
		t.Errorf("histogram %+v", h)
	}
	for i := 1; i < len(h.Buckets); i++ {
		if h.Buckets[i] < h.Buckets[i-1] {
			t.Errorf("histogram not cumulative: %v", h.Buckets)
		}
	}
}

// TestStatsDisabled: DisableStats stops the per-request counters only.
func TestStatsDisabled(t *testing.T) {
	t.Parallel()
	srv, addr := statsServer(t, &Server{DisableStats: true})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	rc.resp("GET")
	st := waitStats(t, srv, "closed", func(st *Stats) bool { return st.Closed == 1 })
	if st.Requests != 0 || st.Responses != [5]uint64{} || st.Accepted != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestStatsDoesNotAllocate: reading the statistics allocates nothing, also
// with connections open.
func TestStatsDoesNotAllocate(t *testing.T) {
	srv, addr := statsServer(t, nil)
	for range 3 {
		rc := dial(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		rc.resp("GET")
	}
	var st Stats
	if n := testing.AllocsPerRun(100, func() { srv.Stats(&st) }); n != 0 {
		t.Errorf("Stats allocates %v times per call", n)
	}
	if st.ConnsIdle+st.ConnsActive != 3 {
		t.Errorf("open connections %d+%d, want 3", st.ConnsIdle, st.ConnsActive)
	}
}

// TestMetricsHandler: the native and net/http metrics handlers answer the
// text format with the current counters (its grammar is checked with
// Prometheus's own parser in the ecosystem module).
func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	srv := &Server{}
	native := srv.MetricsHandler()
	compat := FromHTTP(srv.MetricsHTTPHandler())
	_, addr := startServer(t, srv, func(x *Ctx) {
		if string(x.Path()) == "/metrics-compat" {
			compat.ServeCtx(x)
			return
		}
		native.ServeCtx(x)
	})
	rc := dial(t, addr)
	for _, path := range []string{"/metrics", "/metrics-compat"} {
		rc.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := rc.resp("GET")
		if ct := resp.Header.Get("Content-Type"); ct != MetricsContentType {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		for _, line := range []string{
			"# TYPE riptide_requests_total counter\n",
			"riptide_connections_accepted_total 1\n",
			`riptide_connections{state="active"} 1` + "\n",
			`riptide_request_duration_seconds_bucket{le="+Inf"} `,
			`riptide_responses_total{class="2xx"} `,
		} {
			if !strings.Contains(body, line) {
				t.Errorf("%s: no %q in\n%s", path, line, body)
			}
		}
	}
}

// statsHandlers are the routes of the statistics tests, for both doors.
func statsHandlers() map[string]Handler {
	return map[string]Handler{
		"native": HandlerFunc(func(x *Ctx) {
			switch string(x.Path()) {
			case "/panic":
				panic("boom")
			case "/missing":
				x.SetStatus(404)
			default:
				b, _ := x.ReadBody()
				x.WriteString("Hello " + strconv.Itoa(len(b)))
			}
		}),
		"compat": FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/panic":
				panic("boom")
			case "/missing":
				w.WriteHeader(404)
			default:
				b, _ := io.ReadAll(r.Body)
				io.WriteString(w, "Hello "+strconv.Itoa(len(b)))
			}
		})),
	}
}

// TestStatsHTTP2: HTTP/2 streams count as streams and as requests, by
// status class and in the duration histogram, through both doors alike; a
// panic counts as a 5xx and a panic (and, in the compat door, whose
// stream is reset, a reset).
func TestStatsHTTP2(t *testing.T) {
	t.Parallel()
	resets := map[string]uint64{"native": 0, "compat": 1}
	for door, h := range statsHandlers() {
		t.Run(door, func(t *testing.T) {
			srv, addr := startServer(t, &Server{HTTP2: &HTTP2Config{H2C: true}, Handler: h}, nil)
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			tr := &http.Transport{Protocols: &p}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for _, path := range []string{"/", "/missing", "/post", "/panic"} {
				var resp *http.Response
				var err error
				if path == "/post" {
					resp, err = cl.Post("http://"+addr+path, "text/plain", strings.NewReader(strings.Repeat("x", 1000)))
				} else {
					resp, err = cl.Get("http://" + addr + path)
				}
				if path == "/panic" && door == "compat" {
					// As net/http's HTTP/2 does, the stream is reset; the
					// native door answers 500, as over HTTP/1.1.
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					if err == nil {
						t.Fatal("/panic: the stream was not reset")
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Fatalf("%s over %s", path, resp.Proto)
				}
			}
			st := waitStats(t, srv, "four streams", func(st *Stats) bool { return st.Requests == 4 })
			if st.H2Streams != 4 || st.Responses != [5]uint64{0, 2, 0, 1, 1} || st.Duration.Count != 4 ||
				st.Duration.Buckets[len(DurationBuckets)-1] != 4 || st.Duration.Sum <= 0 ||
				st.Panics != 1 || st.H2Resets != resets[door] || st.H2ClientResets != 0 || st.ConnsActive != 1 {
				t.Errorf("stats %+v", st)
			}
			if st.BytesIn < 1000+uint64(len(h2Preface)) || st.BytesOut < uint64(len("Hello 0Hello 1000")) {
				t.Errorf("bytes in %d, out %d", st.BytesIn, st.BytesOut)
			}
		})
	}
}

// TestStatsHTTP2Bytes: over HTTP/2, BytesIn and BytesOut are exactly the
// bytes the client wrote and read: every frame, not only the body; a
// stream the client resets counts in H2ClientResets.
func TestStatsHTTP2Bytes(t *testing.T) {
	t.Parallel()
	for door, h := range statsHandlers() {
		t.Run(door, func(t *testing.T) {
			srv, addr := startServer(t, &Server{HTTP2: &HTTP2Config{H2C: true}, Handler: h}, nil)
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			var out bytes.Buffer
			out.WriteString(h2Preface)
			fw := http2.NewFramer(&out, nil)
			fw.WriteSettings()
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/"}} {
				enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			fw.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
			fw.WriteData(1, true, []byte("12345"))
			// Stream 3 is opened and cancelled by the client.
			fw.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: hb.Bytes(), EndHeaders: true})
			fw.WriteRSTStream(3, http2.ErrCodeCancel)
			sent := out.Len()
			if _, err := nc.Write(out.Bytes()); err != nil {
				t.Fatal(err)
			}
			// Read until the response ends, then half-close: the server
			// answers with GOAWAY and closes.
			var in countingReader
			in.r = nc
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			readToEnd(t, nc, &in, "Hello 5")
			st := waitStats(t, srv, "the connection closed and both streams' handlers returned",
				func(st *Stats) bool { return st.Closed == 1 && st.Requests == 2 })
			if st.BytesIn != uint64(sent) || st.BytesOut != uint64(in.n) || st.H2Streams != 2 ||
				st.H2ClientResets != 1 || st.H2Resets != 0 {
				t.Errorf("client wrote %d and read %d bytes; stats %+v", sent, in.n, st)
			}
		})
	}
}

// TestStatsH2CUpgrade: a request upgraded to h2c counts once, as stream 1
// of the HTTP/2 connection, and every byte of both protocols is counted.
func TestStatsH2CUpgrade(t *testing.T) {
	t.Parallel()
	srv, addr := statsServer(t, &Server{HTTP2: &HTTP2Config{H2CUpgrade: true}})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	head := "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n\r\n"
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	in := &countingReader{r: nc}
	br := bufio.NewReader(in)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	var out bytes.Buffer
	out.WriteString(h2Preface)
	http2.NewFramer(&out, nil).WriteSettings()
	sent := len(head) + out.Len()
	if _, err := nc.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	readToEnd(t, nc, br, "Hello 0")
	st := waitStats(t, srv, "the bytes of both protocols", func(st *Stats) bool {
		return st.Hijacked == 1 && st.BytesIn == uint64(sent) && st.BytesOut == uint64(in.n)
	})
	if st.Requests != 1 || st.H2Streams != 1 || st.Responses != [5]uint64{0, 1, 0, 0, 0} {
		t.Errorf("stats %+v", st)
	}
}

// readToEnd reads HTTP/2 frames from r until stream 1 ends, checks its
// body, then half-closes nc and reads the rest (the server's GOAWAY) until
// the server closes.
func readToEnd(t *testing.T, nc net.Conn, r io.Reader, want string) {
	t.Helper()
	fr := http2.NewFramer(nil, r)
	var body []byte
	for ended := false; !ended; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := f.(*http2.DataFrame); ok {
			body = append(body, d.Data()...)
		}
		ended = f.Header().StreamID == 1 && f.Header().Flags.Has(http2.FlagDataEndStream)
	}
	if string(body) != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	nc.(*net.TCPConn).CloseWrite()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// expvarRuns numbers TestPublishExpvar's runs.
var expvarRuns atomic.Int64

// TestPublishExpvar: the statistics appear as a JSON expvar.
func TestPublishExpvar(t *testing.T) {
	t.Parallel()
	srv, addr := statsServer(t, nil)
	// A name per run: expvar names are for the process's life, and
	// -count runs the test again in the same process.
	name := "riptide_test_stats_" + strconv.FormatInt(expvarRuns.Add(1), 10)
	srv.PublishExpvar(name)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	waitStats(t, srv, "a request", func(st *Stats) bool { return st.Requests == 1 })
	var st Stats
	if err := json.Unmarshal([]byte(expvar.Get(name).String()), &st); err != nil || st.Requests != 1 || st.Accepted != 1 {
		t.Errorf("expvar: %+v, %v", st, err)
	}
}

// BenchmarkStatsRequest is the statistics' cost per request: the two
// engine hooks around a request, on one connection and on parallel
// connections (each with its own shard, as the engine assigns them).
func BenchmarkStatsRequest(b *testing.B) {
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "DisableStats"}[on]
		s := &Server{DisableStats: !on}
		s.init()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				c := newConn(s, nil)
				for pb.Next() {
					c.statRequestStart()
					c.ctx.resp.status = 200
					c.nin, c.nout = 40, 150
					c.statRequestDone()
				}
			})
		})
	}
}

func TestStatShardSize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(statShard{}); n%64 != 0 {
		t.Errorf("statShard is %d bytes, not a whole number of cache lines", n)
	}
}

// TestStripedCounter: every Add is in the sum, and no two stripes share a
// cache line.
func TestStripedCounter(t *testing.T) {
	t.Parallel()
	var c stripedCounter
	if n := unsafe.Sizeof(c[0]); n != 64 {
		t.Errorf("a stripe is %d bytes, want one cache line", n)
	}
	for i := range 1000 {
		c.Add(uint64(i))
	}
	if n := c.Load(); n != 999*1000/2 {
		t.Errorf("Load = %d, want %d", n, 999*1000/2)
	}
}

// TestProcShard: on one P the shard index stays the same from call to
// call (the P's own), and getting it allocates nothing.
func TestProcShard(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	first := procShard()
	if first >= statShards {
		t.Fatalf("procShard = %d, not below %d", first, statShards)
	}
	if a := testing.AllocsPerRun(1000, func() {
		if i := procShard(); i != first && !israce.Enabled {
			// The race detector drops sync.Pool items at random.
			t.Fatalf("procShard = %d, then %d on the same P", first, i)
		}
	}); a != 0 {
		t.Errorf("procShard: %v allocations", a)
	}
}
