package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// ServerSummary is one server's statistics over the clean runs of one
// workload.
type ServerSummary struct {
	Server  string  `json:"server"`
	Runs    int     `json:"runs"`
	Flagged int     `json:"flagged_runs"`
	RPS     Spread  `json:"rps"`
	P50US   float64 `json:"p50_us_median"`
	P99US   float64 `json:"p99_us_median"`
	// MeanUS and SDUS are the medians over rounds of h2load's mean and
	// standard deviation of request time (h2load has no percentiles).
	MeanUS      float64 `json:"mean_us_median,omitempty"`
	SDUS        float64 `json:"sd_us_median,omitempty"`
	CPUPerReqUS float64 `json:"cpu_us_per_request_median"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	// IdleKiBPerConn is the idle workload's median RSS growth per
	// connection.
	IdleKiBPerConn float64 `json:"idle_kib_per_conn_median,omitempty"`
	// HeapKiBPerConn and GoroutinesPerConn are wsidle's medians of the
	// server's live heap plus stacks, and goroutines, per connection.
	HeapKiBPerConn    float64 `json:"heap_kib_per_conn_median,omitempty"`
	GoroutinesPerConn float64 `json:"goroutines_per_conn_median,omitempty"`
	// AllocsPerReq is the median over rounds of the server's heap
	// allocations per request, and MBps the spread of body megabytes per
	// second (HTTP/3 workloads only).
	AllocsPerReq float64 `json:"allocs_per_request_median,omitempty"`
	MBps         Spread  `json:"mb_per_s,omitzero"`
	// CPUPerMBUS, ServerBusyPct and LoadBusyPct are the medians of the
	// runs' figures of those names (HTTP/3 workloads only).
	CPUPerMBUS    float64 `json:"cpu_us_per_mb_median,omitempty"`
	ServerBusyPct float64 `json:"server_busy_pct_median,omitempty"`
	LoadBusyPct   float64 `json:"load_busy_pct_median,omitempty"`
	// LoadCPUPerReqUS is the median of the runs' client CPU per message
	// (WebSocket workloads).
	LoadCPUPerReqUS float64 `json:"load_cpu_us_per_request_median,omitempty"`
	// ServerSetBusyPct and ServerSetIRQPct are the medians of the runs'
	// figures of those names (HTTP/3 and WebSocket workloads with pinned
	// servers).
	ServerSetBusyPct float64 `json:"server_set_busy_pct_median,omitempty"`
	ServerSetIRQPct  float64 `json:"server_set_irq_pct_median,omitempty"`
	// VsBaseline and VsReference are the per-round RPS ratios against
	// net/http (BaselineOf: quic-go's http3.Server for the HTTP/3
	// workloads; for the WebSocket workloads the best peer of the round,
	// BestPeer) and fasthttp (median, min, max over rounds).
	VsBaseline  Spread `json:"vs_nethttp"`
	VsReference Spread `json:"vs_fasthttp"`
	// VsCeiling is the per-round RPS ratio against the workload's
	// ceiling (CeilingOf): the C ceiling over HTTP/1.1, h2o over HTTP/2.
	VsCeiling Spread `json:"vs_ceiling"`
}

// CeilingOf is the server a workload's ×ceiling ratios are computed
// against: the C ceiling for HTTP/1.1, h2o (the C HTTP/2 reference) for
// the HTTP/2 workloads, ws-floor (WSFloor) for the WebSocket ones.
func CeilingOf(w Workload) string {
	if w.WS != WSNone {
		return WSFloor
	}
	if w.HTTP2 != H2None {
		return "h2o"
	}
	return "ceiling"
}

// WSFloor is the WebSocket workloads' reference floor
// (bench/servers/ws-floor): the least user-space work around the system
// calls the workloads force. It is their ×ceiling and not a peer: the
// best-peer ratios leave it out.
const WSFloor = "ws-floor"

// WorkloadSummary holds every server's summary for one workload.
type WorkloadSummary struct {
	Workload string `json:"workload"`
	Desc     string `json:"desc"`
	Conns    int    `json:"connections"`
	// Tool is the load generator, "wrk" or "h2load"; Load its invocation.
	Tool    string          `json:"tool"`
	Load    string          `json:"load"`
	Servers []ServerSummary `json:"servers"`
}

// writeTopology writes the multi-core section: both CPU sets, what they
// gave each side and the machine's topology as read (also in topology.txt).
func writeTopology(w io.Writer, c Config) {
	if c.Topology == nil {
		return
	}
	fmt.Fprintf(w, "## CPU sets and topology\n\n")
	fmt.Fprintf(w, "| | CPUs | threads |\n|---|---|---|\n")
	fmt.Fprintf(w, "| servers | %s | %d (GOMAXPROCS of the Go servers; threads of the ceiling, h2o, nghttpd; nginx worker processes) |\n",
		orAll(c.ServerCPUs), c.Scale.ServerThreads)
	fmt.Fprintf(w, "| load (wrk, h2load) | %s | %d, with %d connections unless a workload fixes its own |\n\n",
		orAll(c.WrkCPUs), c.Scale.LoadThreads, c.Connections)
	fmt.Fprintf(w, "The sets share no CPU and no physical core (checked before the run). Topology (%s):\n\n```\n%s```\n\n",
		c.Topology.Source, c.Topology.Raw)
	if c.Topology.Allowed != nil {
		fmt.Fprintf(w, "The container's cgroup cpuset allows CPUs %s.\n\n", c.Topology.Allowed)
	}
}

// Summarize computes the per-workload summaries from res.Runs.
func Summarize(res *Results) []WorkloadSummary {
	var out []WorkloadSummary
	for _, wn := range res.Workloads {
		w, _ := LookupWorkload(wn)
		w = w.idleConns(res.Config.IdleConns)
		ws := WorkloadSummary{Workload: wn, Desc: w.Desc, Conns: res.Config.Connections}
		if w.Conns > 0 {
			ws.Conns = w.Conns
		}
		if w.WS != WSNone && res.Config.WSConns > 0 {
			ws.Conns = res.Config.WSConns
		}
		ws.Tool, ws.Load = w.Tool(), w.LoadCommand(ws.Conns, res.Config.Scale.LoadThreads)
		for _, sn := range res.Servers {
			ss := ServerSummary{Server: sn, PeakRSS: res.PeakRSS[wn+"/"+sn]}
			var rps, p50, p99, mean, sd, cpu, idle, heap, gor, allocs, mbps, cpuMB, srvBusy, loadBusy, setBusy, setIRQ, loadCPU []float64
			for _, r := range res.Runs {
				if r.Workload != wn || r.Server != sn {
					continue
				}
				ss.Runs++
				if r.Flagged {
					ss.Flagged++
					continue
				}
				rps = append(rps, r.RPS)
				p50 = append(p50, r.P50US)
				p99 = append(p99, r.P99US)
				mean = append(mean, r.MeanUS)
				sd = append(sd, r.SDUS)
				cpu = append(cpu, r.CPUPerReqUS)
				idle = append(idle, r.IdleKiBPerConn)
				heap = append(heap, r.HeapKiBPerConn)
				gor = append(gor, r.GoroutinesPerConn)
				if r.AllocsPerReq > 0 {
					allocs = append(allocs, r.AllocsPerReq)
				}
				mbps = append(mbps, r.MBps)
				cpuMB = append(cpuMB, r.CPUPerMBUS)
				srvBusy = append(srvBusy, r.ServerBusyPct)
				loadBusy = append(loadBusy, r.LoadBusyPct)
				setBusy = append(setBusy, r.ServerSetBusyPct)
				setIRQ = append(setIRQ, r.ServerSetIRQPct)
				loadCPU = append(loadCPU, r.LoadCPUPerReqUS)
			}
			if ss.Runs == 0 {
				continue
			}
			ss.RPS = SpreadOf(rps)
			ss.P50US = SpreadOf(p50).Median
			ss.P99US = SpreadOf(p99).Median
			ss.MeanUS = SpreadOf(mean).Median
			ss.SDUS = SpreadOf(sd).Median
			ss.CPUPerReqUS = SpreadOf(cpu).Median
			ss.IdleKiBPerConn = SpreadOf(idle).Median
			ss.HeapKiBPerConn = SpreadOf(heap).Median
			ss.GoroutinesPerConn = SpreadOf(gor).Median
			ss.AllocsPerReq = SpreadOf(allocs).Median
			if w.WS != WSNone {
				ss.ServerBusyPct = SpreadOf(srvBusy).Median
				ss.LoadBusyPct = SpreadOf(loadBusy).Median
				ss.LoadCPUPerReqUS = SpreadOf(loadCPU).Median
				ss.ServerSetBusyPct = SpreadOf(setBusy).Median
				ss.ServerSetIRQPct = SpreadOf(setIRQ).Median
			}
			if w.HTTP3 {
				ss.MBps = SpreadOf(mbps)
				ss.CPUPerMBUS = SpreadOf(cpuMB).Median
				ss.ServerBusyPct = SpreadOf(srvBusy).Median
				ss.LoadBusyPct = SpreadOf(loadBusy).Median
				ss.ServerSetBusyPct = SpreadOf(setBusy).Median
				ss.ServerSetIRQPct = SpreadOf(setIRQ).Median
			}
			ss.VsBaseline = SpreadOf(roundRatios(res.Runs, wn, sn, BaselineOf(w)))
			if w.WS != WSNone {
				ss.VsBaseline = SpreadOf(bestPeerRatios(res.Runs, wn, sn))
			}
			ss.VsReference = SpreadOf(roundRatios(res.Runs, wn, sn, Reference))
			ss.VsCeiling = SpreadOf(roundRatios(res.Runs, wn, sn, CeilingOf(w)))
			ws.Servers = append(ws.Servers, ss)
		}
		if len(ws.Servers) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// IsRiptide reports whether the named server is one of riptide's (its
// name starts with "riptide"): the others are its peers.
func IsRiptide(server string) bool { return strings.HasPrefix(server, "riptide") }

// bestPeerRatios returns, for every round with a clean run of server and
// of at least one peer (a server that is not riptide's, nor the floor
// WSFloor), rps(server) /
// the highest peer rps of that round: the WebSocket workloads' "×best
// peer" (issue 35 asks riptide for 1.3× the best of nbio, gorilla, coder,
// gobwas and fasthttp/websocket).
func bestPeerRatios(runs []RunRecord, workload, server string) []float64 {
	best := map[int]float64{}
	for _, r := range runs {
		if r.Workload == workload && !r.Flagged && !IsRiptide(r.Server) && r.Server != WSFloor && r.Server != server && r.RPS > best[r.Round] {
			best[r.Round] = r.RPS
		}
	}
	var out []float64
	for _, r := range runs {
		if r.Workload == workload && !r.Flagged && r.Server == server {
			if b := best[r.Round]; b > 0 {
				out = append(out, r.RPS/b)
			}
		}
	}
	return out
}

// WriteReport writes results.json, results.md and the PNG charts into dir.
func WriteReport(res *Results, dir string) error {
	return WriteResults(dir, res, func() (map[string]string, error) { return WriteCharts(res, dir) },
		func(w io.Writer, charts map[string]string) { writeMarkdown(w, res, charts) })
}

// WriteResults lays out a benchmark report in dir, as every benchmark of
// this module does: v as results.json, then the charts (charts draws them
// and says what it drew), then results.md written by md.
func WriteResults[C any](dir string, v any, charts func() (C, error), md func(w io.Writer, charts C)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	drawn, err := charts()
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "results.md"))
	if err != nil {
		return err
	}
	md(f, drawn)
	return f.Close()
}

func writeMarkdown(w io.Writer, res *Results, charts map[string]string) {
	m, c := res.Meta, res.Config
	fmt.Fprintf(w, "# riptide benchmark, %s\n\n", m.Date.Format("2006-01-02 15:04 MST"))
	if res.Interrupted {
		fmt.Fprintf(w, "**Interrupted run: partial results.**\n\n")
	}
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(w, "| %s | %s |\n", k, v) }
	row("command", "`"+c.Command+"`")
	row("machine", m.Machine+" ("+m.Hostname+")")
	row("CPU", fmt.Sprintf("%s, nproc %d", m.CPUModel, m.NProc))
	row("kernel", m.Kernel)
	row("Go", m.GoVersion)
	row("commit", m.Commit)
	var gens []string
	if m.Wrk != "not used" {
		gens = append(gens, fmt.Sprintf("%s, `-t%d`", m.Wrk, max(c.Scale.LoadThreads, 1)))
	}
	if m.H2load != "" {
		gens = append(gens, fmt.Sprintf("%s, `-t%d -m%d`", m.H2load, max(c.Scale.LoadThreads, 1), H2Streams))
	}
	for _, wn := range res.Workloads {
		g := ""
		switch w := mustWorkload(wn); {
		case w.HTTP3 && w.RustH3:
			g = "h3load-rs for h3rs: " + m.H3rs
		case w.HTTP3:
			g = "the harness's quic-go client for HTTP/3 (h3load.go)"
		case w.WS != WSNone:
			g = "the harness's WebSocket client (ws.go), in the harness process: " + wsRun{goroutines: c.WSGoroutines}.clientNameSpin(c.WSSpin)
		}
		if g != "" && !slices.Contains(gens, g) {
			gens = append(gens, g)
		}
	}
	row("load generator", strings.Join(gens, "; ")+"; one load-generator process at a time")
	if len(m.Modules) > 0 {
		row("peers", strings.Join(m.Modules, ", "))
	}
	if m.Nginx != "" {
		row("nginx", m.Nginx)
	}
	row("C compiler", m.CC)
	pin := "none"
	if c.ServerCPUs != "" || c.WrkCPUs != "" {
		pin = fmt.Sprintf("servers on CPUs %q, wrk on CPUs %q", c.ServerCPUs, c.WrkCPUs)
		if c.Scale.ServerThreads > 0 {
			pin += fmt.Sprintf(" (servers: GOMAXPROCS and worker threads %d; load: %d threads, %d connections)",
				c.Scale.ServerThreads, c.Scale.LoadThreads, c.Connections)
		}
	}
	row("protocol", fmt.Sprintf("%d rounds × %s per server and workload, server order rotated each round, "+
		"%s warm-up per server, pinning: %s", c.Rounds, c.Duration, c.Warmup, pin))
	row("elapsed", res.Elapsed.Round(time.Second).String())
	fmt.Fprintln(w)
	writeTopology(w, c)

	// Overview: ratio to net/http (the WebSocket workloads have their
	// own tables, relative to the best peer).
	var overview []WorkloadSummary
	for _, ws := range res.Summary {
		if ws.Tool != "ws" {
			overview = append(overview, ws)
		}
	}
	if len(overview) > 0 {
		fmt.Fprintf(w, "## Throughput relative to net/http\n\n")
		fmt.Fprintf(w, "Median over rounds of rps(server) / rps(nethttp) in the same round; "+
			"min–max in parentheses. Columns marked (×%s) are HTTP/3 workloads, relative to that server instead.\n\n", H3Baseline)
		fmt.Fprintf(w, "| server |")
		for _, ws := range overview {
			if b := BaselineOf(mustWorkload(ws.Workload)); b != Baseline {
				fmt.Fprintf(w, " %s (×%s) |", ws.Workload, b)
				continue
			}
			fmt.Fprintf(w, " %s |", ws.Workload)
		}
		fmt.Fprintf(w, "\n|---|")
		for range overview {
			fmt.Fprintf(w, "---|")
		}
		fmt.Fprintln(w)
		for _, sn := range res.Servers {
			fmt.Fprintf(w, "| %s |", sn)
			for _, ws := range overview {
				fmt.Fprintf(w, " %s |", ratioCell(findServer(ws, sn), true))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		if f, ok := charts["ratio"]; ok {
			fmt.Fprintf(w, "![throughput relative to net/http](%s)\n\n", f)
		}
	}

	writeCeilingRatios(w, res)

	anyH2 := false
	for _, ws := range res.Summary {
		h2 := ws.Tool == "h2load"
		anyH2 = anyH2 || h2
		fmt.Fprintf(w, "## %s: %s, %s\n\n", ws.Workload, ws.Desc, ws.Load)
		if ws.Tool == "idle" {
			writeIdleTable(w, ws)
			continue
		}
		if ws.Tool == "ws" {
			writeWSTable(w, ws)
			if f, ok := charts["rps-"+ws.Workload]; ok {
				fmt.Fprintf(w, "![%s](%s)\n\n", ws.Workload, f)
			}
			continue
		}
		if ws.Tool == "h3" {
			writeH3Table(w, ws)
			if f, ok := charts["rps-"+ws.Workload]; ok {
				fmt.Fprintf(w, "![%s RPS](%s)\n\n", ws.Workload, f)
			}
			continue
		}
		lat1, lat2 := "p50", "p99"
		if h2 {
			lat1, lat2 = "mean", "sd" // h2load reports no percentiles
		}
		fmt.Fprintf(w, "| server | RPS median | min | max | spread | ×nethttp | ×fasthttp | %s | %s | CPU µs/req | peak RSS | flagged runs |\n", lat1, lat2)
		fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, ss := range ws.Servers {
			l1, l2 := ss.P50US, ss.P99US
			if h2 {
				l1, l2 = ss.MeanUS, ss.SDUS
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				ss.Server, FormatCount(ss.RPS.Median, ss.RPS.N), FormatCount(ss.RPS.Min, ss.RPS.N), FormatCount(ss.RPS.Max, ss.RPS.N),
				pct(ss.RPS.SpreadPct()), ratioCell(&ss, true), ratioCell(&ss, false),
				FormatMicros(l1, ss.RPS.N), FormatMicros(l2, ss.RPS.N), cpuCell(ss),
				FormatMiB(ss.PeakRSS), flaggedCell(ss))
		}
		fmt.Fprintln(w)
		if f, ok := charts["rps-"+ws.Workload]; ok {
			fmt.Fprintf(w, "![%s RPS](%s)\n\n", ws.Workload, f)
		}
	}

	var flagged []RunRecord
	for _, r := range res.Runs {
		if r.Flagged {
			flagged = append(flagged, r)
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintf(w, "## Flagged runs (excluded from medians and ratios)\n\n| workload | server | round | RPS | reason | raw |\n|---|---|--:|--:|---|---|\n")
		for _, r := range flagged {
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %s | [%s](%s) |\n", r.Workload, r.Server, r.Round, r.RPS, r.Flag, filepath.Base(r.Raw), r.Raw)
		}
		fmt.Fprintln(w)
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "## Skipped\n\n")
		for _, s := range res.Skipped {
			if s.Workload != "" {
				fmt.Fprintf(w, "- %s on %s: %s\n", s.Server, s.Workload, s.Reason)
			} else {
				fmt.Fprintf(w, "- %s: %s\n", s.Server, s.Reason)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Servers\n\n")
	for _, sn := range res.Servers {
		s, _ := Lookup(sn)
		fmt.Fprintf(w, "- **%s**: %s\n", sn, s.Desc)
	}
	fmt.Fprint(w, `
## How to read this

- Absolute RPS moves 5–30% between runs on this kind of shared 2-vCPU machine;
  compare servers through the per-round ratios, which are measured seconds
  apart under the same conditions.
- wrk and the server share the two vCPUs, so every number includes the load
  generator's own cost; the ceiling row is the most this machine's loopback
  and syscalls allow with this client.
- The ceiling and nginx answer with canned or static responses (no JSON
  encoding, no echo: the ceiling's echo row sends a canned 1 KiB reply and
  nginx skips echo).
- CPU µs/req is the server's user+system time from /proc/<pid>/stat divided by
  completed requests; peak RSS is VmHWM at the end of the workload.
- Latency percentiles of the pipelined workload are per batch of 16.
- Raw wrk output for every run is under raw/, server logs under logs/, the
  wrk scripts under lua/.
`)
	for _, ws := range res.Summary {
		if ws.Tool == "h3" {
			fmt.Fprintf(w, `- HTTP/3 workloads (h3, h3bulk) are driven by the harness's own client on
  quic-go (pre-encoded HEADERS on new streams, responses checked with
  riptide's h3 codec), which runs in the harness process, h3rs and h3rsbulk by the Rust
  h3 + quinn client (bench/h3load-rs, its own process); either costs about as
  much CPU per request as the server: compare servers by the ×%s
  ratio, the CPU µs/req (µs/MB of bodies) and allocs/req, which are the server's alone
  (allocations from the server's runtime/metrics, read over HTTP/3 before
  and after each run). "server busy" and "client busy" are each side's
  user+system CPU time over the run in %% of one CPU (the client's: the
  harness process, or h3load-rs's): a side near 100%% × its CPUs bounded
  the run. With pinned servers "server CPUs busy (irq)" is the servers'
  CPU set's use over the run, every process and interrupt counted, and its
  interrupt part: on loopback that is mostly the delivery of the server's
  datagrams into the client's socket, run in softirq on the server's CPU
  (and, without CONFIG_IRQ_TIME_ACCOUNTING, charged to the server's
  system time too). A run with
  any failed request or non-200 response is flagged.
`, H3Baseline)
			break
		}
	}
	for _, ws := range res.Summary {
		if ws.Tool == "ws" {
			fmt.Fprint(w, `- WebSocket workloads (wsidle, wsecho*, wsbroadcast) are driven by the
  harness's own client (internal/harness/ws.go) in the harness process:
  frames built once with riptide's ws codec, answers compared byte for
  byte, one write and one read per message; on Linux the connections are
  driven from epoll by one goroutine per CPU of the harness
  (ws_linux.go), elsewhere by a goroutine each. "×best peer" is, per round,
  the server's rate over the highest rate of a non-riptide server in that
  round (ws-floor, the floor, is no peer: it is these workloads' ceiling). CPU µs/msg (µs/delivery) is the server's user+system time over
  the measured loop alone, handshakes excluded, and client CPU µs/msg the
  harness process's over the same loop; "server busy" and "client busy"
  are the same times in % of one CPU: a side near 100% × its CPUs bounded
  the run. With pinned servers "server CPUs busy (irq)" is the servers'
  CPU set's use over the run, every process and interrupt counted (other
  processes on a shared machine included), and its interrupt part. wsidle reads the server's RSS, then its
  live heap plus goroutine stacks after a forced GC (GET /debug/heap,
  wsserver.Heap, the same code in every server), before the connections
  and 3 s after they all went idle; a fresh server process per round.
`)
			break
		}
	}
	if anyH2 {
		fmt.Fprintf(w, `- HTTP/2 workloads (h2c, h2tls) are driven by h2load (-t1, -m%d concurrent
  streams per connection, timing-based -D), whose raw output is under raw/
  too. h2load reports no latency percentiles: their tables show the median
  over rounds of h2load's mean and standard deviation of request time. A run
  with any failed or errored request, any 4xx/5xx, or a negotiated protocol
  other than h2c / h2 is flagged. Servers without HTTP/2 (fasthttp, the
  ceiling, nginx as configured here) are skipped for them. h2tls includes
  the TLS cost on both sides of loopback; each raw h2load output records
  the negotiated TLS version and cipher.
`, H2Streams)
	}
}

func findServer(ws WorkloadSummary, name string) *ServerSummary {
	for i := range ws.Servers {
		if ws.Servers[i].Server == name {
			return &ws.Servers[i]
		}
	}
	return nil
}

// writeCeilingRatios writes the ×ceiling table (the multi-core issue's
// measure) when some workload ran its ceiling beside another server.
func writeCeilingRatios(w io.Writer, res *Results) {
	found := false
	for _, ws := range res.Summary {
		for _, ss := range ws.Servers {
			found = found || (ss.VsCeiling.N > 0 && ss.Server != CeilingOf(mustWorkload(ws.Workload)))
		}
	}
	if !found {
		return
	}
	fmt.Fprintf(w, "## Throughput relative to the ceiling\n\n")
	fmt.Fprintf(w, "Median over rounds of rps(server) / rps(ceiling) in the same round, min–max in parentheses; "+
		"the ceiling is the C ceiling for HTTP/1.1 workloads, h2o for HTTP/2 ones and ws-floor for WebSocket ones.\n\n| server |")
	for _, ws := range res.Summary {
		fmt.Fprintf(w, " %s (×%s) |", ws.Workload, CeilingOf(mustWorkload(ws.Workload)))
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(res.Summary)))
	for _, sn := range res.Servers {
		fmt.Fprintf(w, "| %s |", sn)
		for _, ws := range res.Summary {
			cell := "–"
			if ss := findServer(ws, sn); ss != nil && ss.VsCeiling.N > 0 {
				cell = fmt.Sprintf("%.2f (%.2f–%.2f)", ss.VsCeiling.Median, ss.VsCeiling.Min, ss.VsCeiling.Max)
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func mustWorkload(name string) Workload {
	w, _ := LookupWorkload(name)
	return w
}

func ratioCell(ss *ServerSummary, baseline bool) string {
	if ss == nil {
		return "–"
	}
	r := ss.VsReference
	if baseline {
		r = ss.VsBaseline
	}
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", r.Median, r.Min, r.Max)
}

// FormatCount formats x with thousands separators, or "–" when n, the sample size, is 0.
func FormatCount(x float64, n int) string {
	if n == 0 {
		return "–"
	}
	s := fmt.Sprintf("%.0f", x)
	// Thousands separators.
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", x)
}

// FormatMicros formats a duration in microseconds as µs or ms, or "–" when n is 0.
func FormatMicros(us float64, n int) string {
	if n == 0 {
		return "–"
	}
	if us >= 1000 {
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}

func cpuCell(ss ServerSummary) string {
	if ss.RPS.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", ss.CPUPerReqUS)
}

// perMBCell is a server's CPU per body megabyte, µs, or "–".
func perMBCell(ss ServerSummary) string {
	if ss.RPS.N == 0 || ss.CPUPerMBUS == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", ss.CPUPerMBUS)
}

// busyCell is a CPU use in percent of one CPU, or "–" where none was
// measured (n clean runs).
func busyCell(p float64, n int) string {
	if n == 0 || p == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", p)
}

// FormatMiB formats a byte count in MiB, or "–" for 0.
func FormatMiB(b int64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

func flaggedCell(ss ServerSummary) string {
	if ss.Flagged == 0 {
		return fmt.Sprintf("0/%d", ss.Runs)
	}
	return fmt.Sprintf("**%d/%d**", ss.Flagged, ss.Runs)
}

// printWorkloadSummary prints a compact table of one workload to w.
func printWorkloadSummary(w io.Writer, res *Results, workload string) {
	for _, ws := range res.Summary {
		if ws.Workload != workload {
			continue
		}
		fmt.Fprintf(w, "%s (%s):\n", ws.Workload, ws.Load)
		rows := append([]ServerSummary(nil), ws.Servers...)
		if mustWorkload(ws.Workload).WS == WSIdle {
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].IdleKiBPerConn < rows[j].IdleKiBPerConn })
			for _, ss := range rows {
				fmt.Fprintf(w, "  %-17s %8.2f KiB RSS  %8.2f KiB heap+stacks  %5.2f goroutines per idle connection  flagged %d/%d\n",
					ss.Server, ss.IdleKiBPerConn, ss.HeapKiBPerConn, ss.GoroutinesPerConn, ss.Flagged, ss.Runs)
			}
			continue
		}
		if ws.Tool == "ws" {
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].RPS.Median > rows[j].RPS.Median })
			for _, ss := range rows {
				p99 := FormatMicros(ss.P99US, ss.RPS.N)
				if mustWorkload(ws.Workload).WS == WSBroadcast {
					p99 = "–" // not measured
				}
				fmt.Fprintf(w, "  %-17s %10s /s [%s–%s]  ×best peer %-18s CPU %6.2f µs each  busy server %3.0f%% client %3.0f%%  p99 %-9s flagged %d/%d\n",
					ss.Server, FormatCount(ss.RPS.Median, ss.RPS.N), FormatCount(ss.RPS.Min, ss.RPS.N), FormatCount(ss.RPS.Max, ss.RPS.N),
					ratioCell(&ss, true), ss.CPUPerReqUS, ss.ServerBusyPct, ss.LoadBusyPct, p99, ss.Flagged, ss.Runs)
			}
			continue
		}
		if ws.Tool == "idle" {
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].IdleKiBPerConn < rows[j].IdleKiBPerConn })
			for _, ss := range rows {
				fmt.Fprintf(w, "  %-15s %8.2f KiB per idle connection  flagged %d/%d\n",
					ss.Server, ss.IdleKiBPerConn, ss.Flagged, ss.Runs)
			}
			continue
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].RPS.Median > rows[j].RPS.Median })
		for _, ss := range rows {
			lat, v := "p99", ss.P99US
			if ws.Tool == "h2load" {
				lat, v = "mean", ss.MeanUS
			}
			if ws.Tool == "h3" {
				fmt.Fprintf(w, "  %-17s %10s rps [%s–%s]  %7.1f MB/s  ×%s %-18s CPU %7.2f µs/req %7.1f µs/MB  busy server %3.0f%% client %3.0f%% server CPUs %3.0f%% (irq %2.0f%%)  allocs/req %6.1f  flagged %d/%d\n",
					ss.Server, FormatCount(ss.RPS.Median, ss.RPS.N), FormatCount(ss.RPS.Min, ss.RPS.N), FormatCount(ss.RPS.Max, ss.RPS.N),
					ss.MBps.Median, H3Baseline, ratioCell(&ss, true), ss.CPUPerReqUS, ss.CPUPerMBUS, ss.ServerBusyPct, ss.LoadBusyPct, ss.ServerSetBusyPct, ss.ServerSetIRQPct,
					ss.AllocsPerReq, ss.Flagged, ss.Runs)
				continue
			}
			fmt.Fprintf(w, "  %-15s %10s rps [%s–%s]  ×nethttp %-18s ×fasthttp %-18s %s %-9s flagged %d/%d\n",
				ss.Server, FormatCount(ss.RPS.Median, ss.RPS.N), FormatCount(ss.RPS.Min, ss.RPS.N), FormatCount(ss.RPS.Max, ss.RPS.N),
				ratioCell(&ss, true), ratioCell(&ss, false), lat, FormatMicros(v, ss.RPS.N), ss.Flagged, ss.Runs)
		}
	}
}

// writeH3Table is an HTTP/3 workload's table: requests (or, for the bulk
// download, body MB/s), the ratio to quic-go's http3.Server, latency, the
// server's CPU and allocations per request.
func writeH3Table(w io.Writer, ws WorkloadSummary) {
	bulk := mustWorkload(ws.Workload).ExpectLen > 0
	unit := "req/s"
	if bulk {
		unit = "MB/s"
	}
	fmt.Fprintf(w, "| server | %s median | min | max | spread | ×%s | p50 | p99 | CPU µs/req | CPU µs/MB | server busy | client busy | server CPUs busy (irq) | allocs/req | peak RSS | flagged runs |\n", unit, H3Baseline)
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, ss := range ws.Servers {
		v, n := ss.RPS, ss.RPS.N
		if bulk {
			v = ss.MBps
		}
		cell := func(x float64) string {
			if bulk {
				if n == 0 {
					return "–"
				}
				return fmt.Sprintf("%.1f", x)
			}
			return FormatCount(x, n)
		}
		allocs := "–"
		if ss.AllocsPerReq > 0 {
			allocs = fmt.Sprintf("%.1f", ss.AllocsPerReq)
		}
		set := "–"
		if ss.ServerSetBusyPct > 0 {
			set = fmt.Sprintf("%.0f%% (%.0f%%)", ss.ServerSetBusyPct, ss.ServerSetIRQPct)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			ss.Server, cell(v.Median), cell(v.Min), cell(v.Max), pct(v.SpreadPct()), ratioCell(&ss, true),
			FormatMicros(ss.P50US, n), FormatMicros(ss.P99US, n), cpuCell(ss), perMBCell(ss), busyCell(ss.ServerBusyPct, n),
			busyCell(ss.LoadBusyPct, n), set, allocs, FormatMiB(ss.PeakRSS), flaggedCell(ss))
	}
	fmt.Fprintln(w)
}

// writeIdleTable is the idle workload's table: RSS growth per connection.
func writeIdleTable(w io.Writer, ws WorkloadSummary) {
	fmt.Fprintf(w, "| server | KiB per idle connection (median) | peak RSS | flagged runs |\n|---|--:|--:|--:|\n")
	for _, ss := range ws.Servers {
		fmt.Fprintf(w, "| %s | %.2f | %s | %s |\n", ss.Server, ss.IdleKiBPerConn, FormatMiB(ss.PeakRSS), flaggedCell(ss))
	}
	fmt.Fprintln(w)
}

// writeWSTable is a WebSocket workload's table: for wsidle the RSS and
// live heap per connection, for the others messages (wsbroadcast:
// deliveries) per second, the ratio to the round's best peer, the
// server's CPU per message and both sides' CPU use.
func writeWSTable(w io.Writer, ws WorkloadSummary) {
	wl := mustWorkload(ws.Workload)
	if wl.WS == WSIdle {
		fmt.Fprintf(w, "| server | RSS KiB per idle connection (median) | live heap + stacks KiB per connection | goroutines per connection | peak RSS | flagged runs |\n|---|--:|--:|--:|--:|--:|\n")
		for _, ss := range ws.Servers {
			fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %s | %s |\n", ss.Server, ss.IdleKiBPerConn, ss.HeapKiBPerConn, ss.GoroutinesPerConn, FormatMiB(ss.PeakRSS), flaggedCell(ss))
		}
		fmt.Fprintln(w)
		return
	}
	unit, per := "messages/s", "msg"
	if wl.WS == WSBroadcast {
		unit, per = "deliveries/s", "delivery"
	}
	fmt.Fprintf(w, "| server | %s median | min | max | spread | ×best peer | p50 | p99 | CPU µs/%s | client CPU µs/%s | server busy | client busy | server CPUs busy (irq) | peak RSS | flagged runs |\n", unit, per, per)
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, ss := range ws.Servers {
		n := ss.RPS.N
		p50, p99 := FormatMicros(ss.P50US, n), FormatMicros(ss.P99US, n)
		if wl.WS == WSBroadcast {
			p50, p99 = "–", "–" // not measured
		}
		load, set := "–", "–"
		if n > 0 && ss.LoadCPUPerReqUS > 0 {
			load = fmt.Sprintf("%.2f", ss.LoadCPUPerReqUS)
		}
		if ss.ServerSetBusyPct > 0 {
			set = fmt.Sprintf("%.0f%% (%.0f%%)", ss.ServerSetBusyPct, ss.ServerSetIRQPct)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			ss.Server, FormatCount(ss.RPS.Median, n), FormatCount(ss.RPS.Min, n), FormatCount(ss.RPS.Max, n), pct(ss.RPS.SpreadPct()),
			ratioCell(&ss, true), p50, p99, cpuCell(ss), load,
			busyCell(ss.ServerBusyPct, n), busyCell(ss.LoadBusyPct, n), set, FormatMiB(ss.PeakRSS), flaggedCell(ss))
	}
	fmt.Fprintln(w)
}
