package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnsureWrk returns the path of wrk. When wrk is missing and the process
// runs as root it installs the Debian package (apt-get update, apt-get
// install -y wrk), reporting progress to log; otherwise it returns an error
// saying how to install it.
func EnsureWrk(ctx context.Context, log io.Writer) (string, error) {
	return ensureTool(ctx, log, "wrk", "wrk", "or build wrk 4.x from source")
}

// EnsureH2load is EnsureWrk for h2load (Debian package nghttp2-client).
func EnsureH2load(ctx context.Context, log io.Writer) (string, error) {
	return ensureTool(ctx, log, "h2load", "nghttp2-client", "or build nghttp2 with its apps")
}

// ensureTool returns the path of tool, installing the Debian package pkg
// with apt-get when it is missing and the process runs as root.
func ensureTool(ctx context.Context, log io.Writer, tool, pkg, otherwise string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%s is not installed and this is not root, so it cannot be installed here: "+
			"run `sudo apt-get install -y %s` (Debian/Ubuntu) %s, then rerun", tool, pkg, otherwise)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("%s is not installed and apt-get is unavailable: install it (package %s) and rerun", tool, pkg)
	}
	fmt.Fprintf(log, "%s not found; installing it: apt-get update && apt-get install -y %s\n", tool, pkg)
	for _, args := range [][]string{{"update"}, {"install", "-y", pkg}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("apt-get %s: %w", strings.Join(args, " "), err)
		}
	}
	return exec.LookPath(tool)
}

// summaryMarker starts the machine-readable line printed by the done()
// function appended to every wrk script.
const summaryMarker = "RIPTIDE_BENCH_SUMMARY "

// doneLua is appended to every workload script: wrk calls done() once, after
// the run, with the merged statistics of all threads.
const doneLua = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('` + summaryMarker + `{"requests":%d,"duration_us":%d,"bytes":%d,` +
	`"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,` +
	`"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`

// WrkStats is what one load-generator run (wrk or h2load) measured.
//
// h2load reports no percentiles: its runs leave P50US, P90US and P99US at
// zero and fill MinUS, MeanUS, SDUS and MaxUS from its "time for request"
// line. Its failed requests (which include errored ones, which include
// timeouts) are in Failed, Errored and Timeout; 4xx and 5xx responses in
// Status.
type WrkStats struct {
	Requests   int64   `json:"requests"`
	DurationUS int64   `json:"duration_us"`
	Bytes      int64   `json:"bytes"`
	Connect    int64   `json:"connect_errors"`
	Read       int64   `json:"read_errors"`
	Write      int64   `json:"write_errors"`
	Status     int64   `json:"non_2xx_3xx"`
	Timeout    int64   `json:"timeouts"`
	P50US      float64 `json:"p50_us"`
	P90US      float64 `json:"p90_us"`
	P99US      float64 `json:"p99_us"`
	MaxUS      float64 `json:"max_us"`
	RPS        float64 `json:"rps"`

	// h2load only.
	Failed   int64   `json:"failed,omitempty"`
	Errored  int64   `json:"errored,omitempty"`
	MinUS    float64 `json:"min_us,omitempty"`
	MeanUS   float64 `json:"mean_us,omitempty"`
	SDUS     float64 `json:"sd_us,omitempty"`
	Protocol string  `json:"protocol,omitempty"` // ALPN or h2c, as h2load printed it

	// idle workload only: the server's RSS growth per idle connection.
	IdleKiBPerConn float64 `json:"idle_kib_per_conn,omitempty"`

	// HTTP/3 workloads only (h3load.go): body megabytes (10^6) per second,
	// and the server's heap allocations per request where it reports
	// them (0 otherwise). Failed counts failed requests.
	MBps         float64 `json:"mb_per_s,omitempty"`
	AllocsPerReq float64 `json:"allocs_per_request,omitempty"`
	// LoadCPUSeconds is the load generator's user+system CPU time during
	// the run (HTTP/3 workloads: the harness process for its quic-go
	// client, the child process for h3load-rs; 0 where not measured). It
	// says whether the client, not the server, bounded the run.
	LoadCPUSeconds float64 `json:"load_cpu_seconds,omitempty"`

	// WebSocket workloads only (ws.go). ServerCPUSeconds is the server's
	// CPU time over the measured loop alone (not the handshakes before
	// it), which the run record then uses. HeapKiBPerConn and
	// GoroutinesPerConn are wsidle's growth of the server's live heap
	// plus goroutine stacks, and of its goroutines, per connection (as
	// the server reports them at wsserver.HeapPath).
	ServerCPUSeconds  float64 `json:"server_cpu_seconds,omitempty"`
	HeapKiBPerConn    float64 `json:"heap_kib_per_conn,omitempty"`
	GoroutinesPerConn float64 `json:"goroutines_per_conn,omitempty"`
}

// SocketErrors is the sum of wrk's connect, read, write and timeout errors.
func (s WrkStats) SocketErrors() int64 { return s.Connect + s.Read + s.Write + s.Timeout }

// parseWrk extracts the summary line printed by doneLua from wrk's output.
func parseWrk(out []byte) (WrkStats, error) {
	i := bytes.Index(out, []byte(summaryMarker))
	if i < 0 {
		return WrkStats{}, errors.New("wrk printed no summary line")
	}
	line := out[i+len(summaryMarker):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	var raw struct {
		Requests   int64   `json:"requests"`
		DurationUS int64   `json:"duration_us"`
		Bytes      int64   `json:"bytes"`
		Connect    int64   `json:"connect"`
		Read       int64   `json:"read"`
		Write      int64   `json:"write"`
		Status     int64   `json:"status"`
		Timeout    int64   `json:"timeout"`
		P50US      float64 `json:"p50_us"`
		P90US      float64 `json:"p90_us"`
		P99US      float64 `json:"p99_us"`
		MaxUS      float64 `json:"max_us"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return WrkStats{}, fmt.Errorf("wrk summary line: %w", err)
	}
	s := WrkStats{
		Requests: raw.Requests, DurationUS: raw.DurationUS, Bytes: raw.Bytes,
		Connect: raw.Connect, Read: raw.Read, Write: raw.Write, Status: raw.Status, Timeout: raw.Timeout,
		P50US: raw.P50US, P90US: raw.P90US, P99US: raw.P99US, MaxUS: raw.MaxUS,
	}
	if s.DurationUS > 0 {
		s.RPS = float64(s.Requests) / (float64(s.DurationUS) / 1e6)
	}
	return s, nil
}

// wrkRun describes one wrk invocation.
type wrkRun struct {
	wrk      string
	script   string // path of the Lua script
	addr     string
	w        Workload
	conns    int
	duration time.Duration
	cpus     string // taskset CPU list, "" for none
	threads  int    // -t; at most conns, 1 when 0
}

// args returns wrk's argument vector (with the taskset prefix if pinned).
func (r wrkRun) args() []string {
	a := []string{r.wrk, "-t" + strconv.Itoa(max(min(r.threads, r.conns), 1)), "-c" + strconv.Itoa(r.conns),
		"-d" + strconv.FormatFloat(r.duration.Seconds(), 'f', -1, 64) + "s",
		"--timeout", "2s", "--latency", "-s", r.script, r.w.scheme() + "://" + r.addr + r.w.Path}
	if r.cpus != "" {
		a = append([]string{"taskset", "-c", r.cpus}, a...)
	}
	return a
}

// wholeSeconds rounds d up to whole seconds, at least one: wrk accepts only
// integer durations.
func wholeSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// run executes wrk and returns its output and parsed statistics.
func (r wrkRun) run(ctx context.Context) ([]byte, WrkStats, error) {
	ctx, cancel := context.WithTimeout(ctx, r.duration+30*time.Second)
	defer cancel()
	out, err := execCombined(ctx, r.args())
	if err != nil {
		return out, WrkStats{}, fmt.Errorf("wrk: %v", err)
	}
	s, err := parseWrk(out)
	return out, s, err
}

// execCombined runs argv and returns its combined output.
func execCombined(ctx context.Context, argv []string) ([]byte, error) {
	return exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
}

// writeScripts writes one Lua script per wrk workload into dir and returns
// their paths by workload name.
func writeScripts(dir string, ws []Workload) (map[string]string, error) {
	paths := map[string]string{}
	for _, w := range ws {
		if w.Tool() != "wrk" {
			continue
		}
		p := filepath.Join(dir, w.Name+".lua")
		if err := os.WriteFile(p, []byte(w.Script()+doneLua), 0o644); err != nil {
			return nil, err
		}
		paths[w.Name] = p
	}
	return paths, nil
}
