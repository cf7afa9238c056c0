package harness

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

func TestParseWrk(t *testing.T) {
	out := []byte("Running 5s test @ http://127.0.0.1:1/\n  1 threads and 50 connections\n" +
		summaryMarker + `{"requests":500000,"duration_us":5000000,"bytes":7000000,"connect":1,"read":2,"write":3,"status":4,"timeout":5,"p50_us":321,"p90_us":523,"p99_us":2848,"max_us":12859}` + "\n")
	s, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.RPS != 100000 {
		t.Errorf("RPS = %v, want requests/duration = 100000", s.RPS)
	}
	if s.SocketErrors() != 1+2+3+5 || s.Status != 4 {
		t.Errorf("errors = %d socket, %d status; want 11 and 4", s.SocketErrors(), s.Status)
	}
	if s.P50US != 321 || s.P99US != 2848 {
		t.Errorf("p50 %v p99 %v", s.P50US, s.P99US)
	}
	if _, err := parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); err == nil {
		t.Error("output without a summary line parsed without error")
	}
}

func TestParseProc(t *testing.T) {
	// Field 2 may hold spaces and parentheses; utime=1234, stime=766 ticks.
	stat := "4242 (my (odd) srv) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 766 0 0 20 0 3 0 100 1000 200"
	cpu, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if cpu != 20 {
		t.Errorf("cpu = %v s, want (1234+766)/100 = 20", cpu)
	}
	kb, err := parseStatusKB("Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    5120 kB\nVmRSS:\t 4000 kB\n", "VmHWM")
	if err != nil || kb != 5120 {
		t.Errorf("VmHWM = %d, %v; want 5120", kb, err)
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Spread
	}{
		{"odd count takes the middle", []float64{3, 1, 2}, Spread{Median: 2, Min: 1, Max: 3, N: 3}},
		{"even count averages the middle two", []float64{4, 1, 3, 2}, Spread{Median: 2.5, Min: 1, Max: 4, N: 4}},
		{"empty is zero", nil, Spread{}},
	}
	for _, tc := range tests {
		if got := SpreadOf(tc.in); got != tc.want {
			t.Errorf("%s: SpreadOf(%v) = %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
	if !math.IsNaN((Spread{}).SpreadPct()) {
		t.Error("SpreadPct of an empty sample is not NaN")
	}
}

func TestRoundRatiosSkipFlaggedRuns(t *testing.T) {
	runs := []RunRecord{
		{Workload: "w", Server: "nethttp", Round: 1, WrkStats: WrkStats{RPS: 100}},
		{Workload: "w", Server: "x", Round: 1, WrkStats: WrkStats{RPS: 200}},
		{Workload: "w", Server: "nethttp", Round: 2, WrkStats: WrkStats{RPS: 100}, Flagged: true},
		{Workload: "w", Server: "x", Round: 2, WrkStats: WrkStats{RPS: 900}},
		{Workload: "w", Server: "nethttp", Round: 3, WrkStats: WrkStats{RPS: 50}},
		{Workload: "w", Server: "x", Round: 3, WrkStats: WrkStats{RPS: 150}, Flagged: true},
		{Workload: "v", Server: "x", Round: 1, WrkStats: WrkStats{RPS: 1}},
	}
	got := roundRatios(runs, "w", "x", "nethttp")
	if len(got) != 1 || got[0] != 2 {
		t.Errorf("ratios = %v, want [2]: only round 1 has clean runs of both", got)
	}
}

func TestSummarizeExcludesFlaggedRuns(t *testing.T) {
	res := &Results{
		Config:    Config{Connections: 50},
		Servers:   []string{"nethttp", "fasthttp"},
		Workloads: []string{"plaintext"},
		PeakRSS:   map[string]int64{"plaintext/nethttp": 1 << 20},
		Runs: []RunRecord{
			{Workload: "plaintext", Server: "nethttp", Round: 1, WrkStats: WrkStats{RPS: 100}},
			{Workload: "plaintext", Server: "fasthttp", Round: 1, WrkStats: WrkStats{RPS: 150}},
			{Workload: "plaintext", Server: "nethttp", Round: 2, WrkStats: WrkStats{RPS: 120}},
			{Workload: "plaintext", Server: "fasthttp", Round: 2, WrkStats: WrkStats{RPS: 5}, Flagged: true, Flag: "socket errors"},
		},
	}
	sum := Summarize(res)
	if len(sum) != 1 || len(sum[0].Servers) != 2 {
		t.Fatalf("summary = %+v", sum)
	}
	f := sum[0].Servers[1]
	if f.Server != "fasthttp" || f.Runs != 2 || f.Flagged != 1 || f.RPS.N != 1 || f.RPS.Median != 150 {
		t.Errorf("fasthttp summary = %+v, want 1 clean run of 150 and 1 flagged", f)
	}
	if f.VsBaseline.N != 1 || f.VsBaseline.Median != 1.5 {
		t.Errorf("fasthttp vs nethttp = %+v, want 1.5 from round 1 only", f.VsBaseline)
	}
	var md bytes.Buffer
	res.Summary = sum
	writeMarkdown(&md, res, nil)
	if !strings.Contains(md.String(), "Flagged runs") || !strings.Contains(md.String(), "socket errors") {
		t.Error("results.md does not list the flagged run")
	}
}

// TestH3BusyFigures: an HTTP/3 run's CPU per body megabyte and both
// sides' CPU use over the load's duration (the run's wall time when the
// load reports none), their medians in the summary and the table's columns.
func TestH3BusyFigures(t *testing.T) {
	rec := RunRecord{CPUSeconds: 1.5}
	rec.setBusy(WrkStats{Bytes: 300e6, DurationUS: 3e6, LoadCPUSeconds: 2.7}, 5*time.Second)
	if rec.CPUPerMBUS != 5000 || rec.ServerBusyPct != 50 || math.Abs(rec.LoadBusyPct-90) > 1e-9 {
		t.Errorf("per MB %v µs, server %v%%, client %v%%; want 5000, 50, 90", rec.CPUPerMBUS, rec.ServerBusyPct, rec.LoadBusyPct)
	}
	rec = RunRecord{CPUSeconds: 1}
	rec.setBusy(WrkStats{LoadCPUSeconds: 0.5}, 2*time.Second)
	if rec.CPUPerMBUS != 0 || rec.ServerBusyPct != 50 || rec.LoadBusyPct != 25 {
		t.Errorf("no bytes, no duration: per MB %v, server %v%%, client %v%%; want 0, 50, 25 (over the wall time)", rec.CPUPerMBUS, rec.ServerBusyPct, rec.LoadBusyPct)
	}

	run := func(server string, round int, mbps, cpuMB, srv, load float64) RunRecord {
		return RunRecord{Workload: "h3bulk", Server: server, Round: round, WrkStats: WrkStats{RPS: mbps / 16, MBps: mbps},
			CPUPerMBUS: cpuMB, ServerBusyPct: srv, LoadBusyPct: load, ServerSetBusyPct: srv + 25, ServerSetIRQPct: 25}
	}
	res := &Results{
		Servers:   []string{H3Baseline},
		Workloads: []string{"h3bulk"},
		Runs: []RunRecord{
			run(H3Baseline, 1, 300, 2000, 70, 99), run(H3Baseline, 2, 310, 2100, 75, 97), run(H3Baseline, 3, 320, 2200, 72, 98),
		},
	}
	res.Summary = Summarize(res)
	ss := res.Summary[0].Servers[0]
	if ss.CPUPerMBUS != 2100 || ss.ServerBusyPct != 72 || ss.LoadBusyPct != 98 {
		t.Errorf("summary per MB %v, server %v%%, client %v%%; want the medians 2100, 72, 98", ss.CPUPerMBUS, ss.ServerBusyPct, ss.LoadBusyPct)
	}
	var md bytes.Buffer
	writeMarkdown(&md, res, nil)
	if row := "| 2100.0 | 72% | 98% | 97% (25%) |"; !strings.Contains(md.String(), "CPU µs/MB | server busy | client busy | server CPUs busy (irq)") || !strings.Contains(md.String(), row) {
		t.Errorf("results.md has no CPU per MB and busy columns (%q):\n%s", row, md.String())
	}
}

// TestParseProcStat: the counters of the CPUs asked for, summed; idle and
// iowait are not busy; hard and soft interrupts are counted apart; a CPU
// missing from the text is an error.
func TestParseProcStat(t *testing.T) {
	stat := `cpu  900 0 90 9000 9 0 90 0 0 0
cpu0 100 5 20 1000 10 1 30 2 7 0
cpu1 200 0 40 2000 0 0 50 0 0 0
cpu10 1 1 1 1 1 1 1 1 0 0
intr 12345
`
	got, err := parseProcStat(stat, CPUSet{0, 1})
	want := cpuTimes{total: 1168 + 2290, busy: 158 + 290, irq: 31 + 50}
	if err != nil || got != want {
		t.Errorf("CPUs 0-1: %+v, %v; want %+v", got, err, want)
	}
	if got, err := parseProcStat(stat, CPUSet{10}); err != nil || got != (cpuTimes{total: 8, busy: 6, irq: 2}) {
		t.Errorf("CPU 10 (not cpu1's prefix): %+v, %v", got, err)
	}
	if _, err := parseProcStat(stat, CPUSet{1, 2}); err == nil {
		t.Error("CPU 2 is missing: no error")
	}
	busy, irq := cpuTimes{total: 300, busy: 250, irq: 60}.pcts(cpuTimes{total: 100, busy: 100, irq: 10})
	if busy != 75 || irq != 25 {
		t.Errorf("pcts = %v, %v; want 75, 25", busy, irq)
	}
}

// TestWorkloadRequestsParse checks that the bytes the conformance test sends
// for each workload are well-formed requests matching the wrk script.
func TestWorkloadRequestsParse(t *testing.T) {
	for _, w := range Workloads() {
		br := bufio.NewReader(bytes.NewReader(w.RawRequests("127.0.0.1:1")))
		for i := 0; i < max(w.Pipeline, 1); i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				t.Fatalf("%s: request %d: %v", w.Name, i, err)
			}
			body, err := io.ReadAll(req.Body)
			if err != nil || !bytes.Equal(body, w.Body) {
				t.Errorf("%s: body %.20q, %v; want %.20q", w.Name, body, err, w.Body)
			}
			if req.URL.Path != w.Path || req.Method != w.method() || req.ContentLength != int64(len(w.Body)) {
				t.Errorf("%s: got %s %s (%d-byte body)", w.Name, req.Method, req.URL.Path, req.ContentLength)
			}
			for k, v := range w.Headers {
				if k == "Connection" {
					if !req.Close {
						t.Errorf("%s: Connection: %s not honoured", w.Name, v)
					}
				} else if req.Header.Get(k) != v {
					t.Errorf("%s: header %s = %q, want %q", w.Name, k, req.Header.Get(k), v)
				}
			}
		}
		if br.Buffered() != 0 {
			t.Errorf("%s: %d trailing bytes", w.Name, br.Buffered())
		}
		script := w.Script()
		if !strings.Contains(script, `wrk.method = "`+w.method()+`"`) {
			t.Errorf("%s: script does not set the method:\n%s", w.Name, script)
		}
		if (w.Pipeline > 1) != strings.Contains(script, "request = function") {
			t.Errorf("%s: pipelined=%v but script is:\n%s", w.Name, w.Pipeline > 1, script)
		}
	}
}

func TestSelect(t *testing.T) {
	ws, err := SelectWorkloads("json,plaintext")
	if err != nil || len(ws) != 2 || ws[0].Name != "plaintext" {
		t.Errorf("SelectWorkloads = %v, %v; want plaintext, json in report order", ws, err)
	}
	if _, err := SelectServers("nethttp,bogus"); err == nil {
		t.Error("unknown server name accepted")
	}
}

func TestSelectDefaultLeavesOutExtra(t *testing.T) {
	ws, err := SelectWorkloads("")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Extra || w.HTTP2 != H2None {
			t.Errorf("default workloads include %s", w.Name)
		}
	}
	ws, err = SelectWorkloads("h2c,h2tls")
	if err != nil || len(ws) != 2 || ws[0].HTTP2 != H2C || ws[1].HTTP2 != H2TLS {
		t.Errorf("SelectWorkloads(h2c,h2tls) = %v, %v", ws, err)
	}
}

func TestHTTP2Support(t *testing.T) {
	h2c, _ := LookupWorkload("h2c")
	for _, s := range Registry() {
		want := s.Kind == KindGo && s.Name != "fasthttp" && !s.HTTP3 && !s.WS && !s.TLSOnly || s.Kind == KindH2O || s.Kind == KindNghttpd
		if s.Supports(h2c) != want {
			t.Errorf("%s supports h2c = %v, want %v", s.Name, s.Supports(h2c), want)
		}
	}
	// The HTTP/2 peers and the inline variant run nothing else.
	plain, _ := LookupWorkload("plaintext")
	for _, name := range []string{"h2o", "nghttpd", "riptide-h2inline"} {
		s, ok := Lookup(name)
		if !ok || !s.H2Only || s.Supports(plain) {
			t.Errorf("%s: registered %v, H2Only %v, supports plaintext %v; want an HTTP/2-only server", name, ok, s.H2Only, s.Supports(plain))
		}
	}
	tls, _ := LookupWorkload("h2tls")
	if got := tls.ServerFlags(); len(got) != 1 || got[0] != "-tls" {
		t.Errorf("h2tls server flags = %v", got)
	}
	r := h2loadRun{h2load: "h2load", addr: "127.0.0.1:1", w: tls, conns: 50, duration: 3 * time.Second}
	if got, want := strings.Join(r.args(), " "), "h2load -t1 -c50 -m10 -D3 https://127.0.0.1:1/"; got != want {
		t.Errorf("h2load args = %q, want %q", got, want)
	}
}

const h2loadOutput = `starting benchmark...
spawning thread #0: 50 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Server Temp Key: X25519 253 bits
Application protocol: h2
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 2.01s, 26612.00 req/s, 913.61KB/s
requests: 53224 total, 53724 started, 53224 done, 53220 succeeded, 4 failed, 3 errored, 1 timeout
status codes: 53250 2xx, 0 3xx, 1 4xx, 0 5xx
traffic: 1.78MB (1871078) total, 212.45KB (217550) headers (space savings 95.74%), 675.70KB (691912) data
                     min         max         mean         sd        +/- sd
time for request:      248us    100.63ms     17.39ms      9.08ms    77.00%
time for connect:     8.36ms     37.19ms     28.04ms      6.73ms    68.00%
time to 1st byte:    38.05ms    136.26ms     62.22ms     20.74ms    90.00%
req/s           :     452.78      576.71      530.03       23.27    76.00%
`

func TestParseH2load(t *testing.T) {
	s, err := parseH2load([]byte(h2loadOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := WrkStats{Requests: 53224, DurationUS: 2010000, Bytes: 1871078, Status: 1, Timeout: 1,
		RPS: 26612, Failed: 4, Errored: 3, MinUS: 248, MaxUS: 100630, MeanUS: 17390, SDUS: 9080, Protocol: "h2"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("parseH2load =\n%+v\nwant\n%+v", s, want)
	}
	flag := flagOf(s, nil, &Proc{done: make(chan struct{})})
	if !strings.Contains(flag, "4 failed requests (3 errored, 1 timed out)") || !strings.Contains(flag, "1 non-2xx/3xx") {
		t.Errorf("flag = %q", flag)
	}
	if _, err := parseH2load([]byte("connect: Connection refused\n")); err == nil {
		t.Error("parseH2load accepted output without a summary")
	}
}

// TestRounds: every server runs once a round, and the first position
// passes to the next server each round.
func TestRounds(t *testing.T) {
	var got []Slot
	for s := range Rounds(3, 3) {
		got = append(got, s)
	}
	want := []Slot{
		{1, 1, 0}, {1, 2, 1}, {1, 3, 2},
		{2, 1, 1}, {2, 2, 2}, {2, 3, 0},
		{3, 1, 2}, {3, 2, 0}, {3, 3, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestPeerConfigs(t *testing.T) {
	dir := t.TempDir()
	a, err := h2oArgs(dir, 8443, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(a[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"num-threads: 2", "port: 8443", "certificate-file: " + dir + "/cert.pem", "file.dir: " + dir + "/htdocs", "ocsp-update-interval: 0"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("h2o.conf lacks %q:\n%s", want, conf)
		}
	}
	body, err := os.ReadFile(filepath.Join(dir, "htdocs", "hello.txt"))
	if err != nil || string(body) != "Hello, World!" {
		t.Errorf("htdocs/hello.txt = %q, %v", body, err)
	}
	n, err := nghttpdArgs(t.TempDir(), 8080, 1, false)
	if err != nil || !slices.Contains(n, "--no-tls") || !slices.Contains(n, "-n1") || n[len(n)-1] != "8080" {
		t.Errorf("nghttpd h2c args = %v, %v", n, err)
	}
}

// TestH2IdleOne checks the h2idle workload's client against net/http's h2c
// server: one GET stream answered, the connection left open.
func TestH2IdleOne(t *testing.T) {
	w, ok := LookupWorkload("h2idle")
	if !ok || w.Tool() != "idle" || w.HTTP2 != H2C {
		t.Fatalf("h2idle workload: %+v", w)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			rw.WriteHeader(505)
			return
		}
		io.WriteString(rw, "Hello, World!")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := h2IdleOne(ln.Addr().String(), "", w)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	w.ExpectBody = []byte("other")
	if c, err := h2IdleOne(ln.Addr().String(), "", w); err == nil {
		c.Close()
		t.Fatal("a wrong body was accepted")
	}
}

// TestTLSIdle checks the idletls workload: only the Go servers that serve
// HTTP/1.1 run it (fasthttp included), with -tls, and its client completes
// one GET over TLS (ALPN http/1.1) against net/http and leaves the
// connection open.
func TestTLSIdle(t *testing.T) {
	w, ok := LookupWorkload("idletls")
	if !ok || w.Tool() != "idle" || !w.TLS || w.HTTP2 != H2None {
		t.Fatalf("idletls workload: %+v", w)
	}
	if got := w.ServerFlags(); len(got) != 1 || got[0] != "-tls" {
		t.Errorf("idletls server flags = %v", got)
	}
	for _, s := range Registry() {
		want := s.Kind == KindGo && !s.H2Only && !s.HTTP3 && !s.WS
		if s.Supports(w) != want {
			t.Errorf("%s supports idletls = %v, want %v", s.Name, s.Supports(w), want)
		}
	}
	cfg, err := benchserver.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || r.ProtoMajor != 1 {
			rw.WriteHeader(505)
			return
		}
		io.WriteString(rw, "Hello, World!")
	}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	req := "GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	c, err := tlsIdleOne(addr, req, w)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.(*tls.Conn).ConnectionState(); st.NegotiatedProtocol != "http/1.1" {
		t.Errorf("ALPN %q, want http/1.1", st.NegotiatedProtocol)
	}
	c.Close()
	w.ExpectBody = []byte("other")
	if c, err := tlsIdleOne(addr, req, w); err == nil {
		c.Close()
		t.Fatal("a wrong body was accepted")
	}
}

// TestTLSWorkload checks the tls workload: wrk over https with keep-alive,
// run by every server that serves HTTP/1.1 over TLS (the Go servers,
// fasthttp included, with -tls, and nginx with ssl on a certificate the
// harness writes), not by the ceiling or the HTTP/2-only peers, and not in
// the default set.
func TestTLSWorkload(t *testing.T) {
	w, ok := LookupWorkload("tls")
	if !ok || w.Tool() != "wrk" || !w.TLS || w.HTTP2 != H2None || w.Idle != 0 || w.Pipeline > 1 || !w.Extra {
		t.Fatalf("tls workload: %+v", w)
	}
	if got := w.ServerFlags(); len(got) != 1 || got[0] != "-tls" {
		t.Errorf("tls server flags = %v", got)
	}
	for _, s := range Registry() {
		want := s.Kind == KindGo && !s.H2Only && !s.HTTP3 && !s.WS || s.Kind == KindNginx
		if s.Supports(w) != want {
			t.Errorf("%s supports tls = %v (%s), want %v", s.Name, s.Supports(w), s.Unsupported(w), want)
		}
	}
	if n, _ := Lookup("nginx"); n.Supports(Workload{Name: "idletls", TLS: true, Idle: 10}) {
		t.Error("nginx runs the idle TLS workload")
	}
	r := wrkRun{wrk: "wrk", addr: "127.0.0.1:1", w: w, script: "s.lua", conns: 50, duration: 2 * time.Second}
	if got, want := strings.Join(r.args(), " "), "wrk -t1 -c50 -d2s --timeout 2s --latency -s s.lua https://127.0.0.1:1/"; got != want {
		t.Errorf("wrk args = %q, want %q", got, want)
	}
	plain, _ := LookupWorkload("plaintext")
	r.w = plain
	if got := r.args(); got[len(got)-1] != "http://127.0.0.1:1/" {
		t.Errorf("plaintext wrk URL = %q", got[len(got)-1])
	}
	if got := w.LoadCommand(50, 1); got != "wrk -t1 -c50, https" {
		t.Errorf("LoadCommand = %q", got)
	}

	// nginx: ssl on the listen line, a certificate and key that load and
	// name 127.0.0.1; plain HTTP without them.
	dir := t.TempDir()
	conf, err := writeNginxConf(dir, 8443, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(conf)
	for _, want := range []string{"listen 127.0.0.1:8443 reuseport ssl;", "ssl_certificate " + dir + "/cert.pem;",
		"ssl_certificate_key " + dir + "/key.pem;", "ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, b)
		}
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || leaf.VerifyHostname("127.0.0.1") != nil {
		t.Errorf("certificate for 127.0.0.1: %v, %v", err, leaf.VerifyHostname("127.0.0.1"))
	}
	plainDir := t.TempDir()
	conf, err = writeNginxConf(plainDir, 8080, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(conf)
	if strings.Contains(string(b), "ssl") || !strings.Contains(string(b), "listen 127.0.0.1:8080 reuseport;") {
		t.Errorf("plain nginx.conf:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(plainDir, "cert.pem")); err == nil {
		t.Error("plain nginx configuration wrote a certificate")
	}
}
