package harness

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// h2loadRun describes one h2load invocation for an HTTP/2 workload.
type h2loadRun struct {
	h2load   string
	addr     string
	w        Workload
	conns    int
	duration time.Duration
	cpus     string // taskset CPU list, "" for none
	threads  int    // -t; at most conns, 1 when 0
}

// url is the target: http:// for h2c (prior knowledge, h2load's default
// for that scheme), https:// for TLS (h2load offers ALPN h2).
func (r h2loadRun) url() string {
	scheme := "http"
	if r.w.HTTP2 == H2TLS {
		scheme = "https"
	}
	return scheme + "://" + r.addr + r.w.Path
}

// wantProtocol is the "Application protocol" h2load must report.
func (r h2loadRun) wantProtocol() string {
	if r.w.HTTP2 == H2TLS {
		return "h2"
	}
	return "h2c"
}

// args returns h2load's argument vector (with the taskset prefix if
// pinned): one thread, conns connections, H2Streams concurrent streams per
// connection, timing-based for the run's duration.
func (r h2loadRun) args() []string {
	a := []string{r.h2load, "-t" + strconv.Itoa(max(min(r.threads, r.conns), 1)), "-c" + strconv.Itoa(r.conns), "-m" + strconv.Itoa(H2Streams),
		"-D" + strconv.Itoa(wholeSeconds(r.duration)), r.url()}
	if r.cpus != "" {
		a = append([]string{"taskset", "-c", r.cpus}, a...)
	}
	return a
}

// run executes h2load and returns its output and parsed statistics. A
// negotiated protocol other than h2c/h2 is returned as an error (with the
// statistics), so the run is flagged.
func (r h2loadRun) run(ctx context.Context) ([]byte, WrkStats, error) {
	ctx, cancel := context.WithTimeout(ctx, r.duration+30*time.Second)
	defer cancel()
	a := r.args()
	out, err := execCombined(ctx, a)
	if err != nil {
		return out, WrkStats{}, fmt.Errorf("h2load: %v", err)
	}
	s, err := parseH2load(out)
	if err != nil {
		return out, s, err
	}
	if want := r.wantProtocol(); s.Protocol != want {
		return out, s, fmt.Errorf("h2load negotiated protocol %q, want %q", s.Protocol, want)
	}
	return out, s, nil
}

var (
	h2Finished = regexp.MustCompile(`(?m)^finished in ([0-9.]+)(us|ms|s), ([0-9.]+) req/s`)
	h2Requests = regexp.MustCompile(`(?m)^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	h2Status   = regexp.MustCompile(`(?m)^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
	h2Traffic  = regexp.MustCompile(`(?m)^traffic: \S+ \((\d+)\) total`)
	h2ReqTime  = regexp.MustCompile(`(?m)^time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)`)
	h2Proto    = regexp.MustCompile(`(?m)^Application protocol: (\S+)`)
)

// parseH2load extracts a run's statistics from h2load's text output.
// Requests is h2load's "done" count and RPS its req/s over the measured
// window; requests still in flight when a timing-based run ends are not
// failures.
func parseH2load(out []byte) (WrkStats, error) {
	text := string(out)
	var s WrkStats
	m := h2Finished.FindStringSubmatch(text)
	if m == nil {
		return s, fmt.Errorf("h2load printed no \"finished in\" line")
	}
	d, err := parseH2Duration(m[1] + m[2])
	if err != nil {
		return s, err
	}
	s.DurationUS = int64(math.Round(d))
	s.RPS, _ = strconv.ParseFloat(m[3], 64)
	m = h2Requests.FindStringSubmatch(text)
	if m == nil {
		return s, fmt.Errorf("h2load printed no \"requests:\" line")
	}
	n := atoi64s(m[1:])
	s.Requests, s.Failed, s.Errored, s.Timeout = n[2], n[4], n[5], n[6]
	if m = h2Status.FindStringSubmatch(text); m != nil {
		n := atoi64s(m[1:])
		s.Status = n[2] + n[3]
	}
	if m = h2Traffic.FindStringSubmatch(text); m != nil {
		s.Bytes, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m = h2ReqTime.FindStringSubmatch(text); m != nil {
		var t [4]float64
		for i := range t {
			if t[i], err = parseH2Duration(m[i+1]); err != nil {
				return s, fmt.Errorf("time for request: %w", err)
			}
		}
		s.MinUS, s.MaxUS, s.MeanUS, s.SDUS = t[0], t[1], t[2], t[3]
	}
	if m = h2Proto.FindStringSubmatch(text); m != nil {
		s.Protocol = m[1]
	}
	return s, nil
}

// parseH2Duration parses h2load's durations ("39us", "101.62ms", "2.01s")
// into microseconds.
func parseH2Duration(v string) (float64, error) {
	for _, u := range []struct {
		suffix string
		us     float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("bad h2load duration %q", v)
			}
			return f * u.us, nil
		}
	}
	return 0, fmt.Errorf("bad h2load duration %q", v)
}

func atoi64s(ss []string) []int64 {
	out := make([]int64, len(ss))
	for i, v := range ss {
		out[i], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}
