package esbench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/riptide-http/riptide/bench/internal/harness"
)

// ServerSummary is one server's statistics over the clean runs of one
// store variant: medians over rounds, and per-round ratios.
type ServerSummary struct {
	Server       string         `json:"server"`
	Runs         int            `json:"runs"`
	Flagged      int            `json:"flagged_runs"`
	OpsPerSec    harness.Spread `json:"ops_per_sec"`
	P50US        float64        `json:"p50_us_median"`
	P99US        float64        `json:"p99_us_median"`
	SSEP99US     float64        `json:"sse_p99_us_median"`
	CPUPerOpUS   float64        `json:"cpu_us_per_op_median"`
	BytesPerOp   float64        `json:"bytes_per_op_median"`
	ObjectsPerOp float64        `json:"objects_per_op_median"`
	PeakRSS      int64          `json:"peak_rss_bytes"`
	// VsBaseline and VsReference are ops/s ratios against net/http and the
	// native fasthttp port; BytesVsBaseline is bytes/op against net/http.
	VsBaseline      harness.Spread `json:"vs_nethttp"`
	VsReference     harness.Spread `json:"vs_fasthttp_native"`
	BytesVsBaseline harness.Spread `json:"bytes_per_op_vs_nethttp"`
}

// StoreSummary holds every server's summary for one store variant.
type StoreSummary struct {
	Store   string          `json:"store"`
	Servers []ServerSummary `json:"servers"`
}

// Summarize computes the per-store summaries from res.Runs.
func Summarize(res *Results) []StoreSummary {
	var out []StoreSummary
	for _, store := range res.Config.Stores {
		ss := StoreSummary{Store: store}
		for _, sn := range res.Config.Servers {
			s := ServerSummary{Server: sn, PeakRSS: res.PeakRSS[store+"/"+sn]}
			var clean []RunRecord
			for _, r := range res.Runs {
				if r.Store == store && r.Server == sn {
					s.Runs++
					if r.Flagged {
						s.Flagged++
					} else {
						clean = append(clean, r)
					}
				}
			}
			if s.Runs == 0 {
				continue
			}
			over := func(v func(RunRecord) float64) harness.Spread {
				xs := make([]float64, len(clean))
				for i, r := range clean {
					xs[i] = v(r)
				}
				return harness.SpreadOf(xs)
			}
			ops := func(r RunRecord) float64 { return r.OpsPerSec }
			bytes := func(r RunRecord) float64 { return r.BytesPerOp }
			s.OpsPerSec = over(ops)
			s.P50US = over(func(r RunRecord) float64 { return r.P50US }).Median
			s.P99US = over(func(r RunRecord) float64 { return r.P99US }).Median
			s.SSEP99US = over(func(r RunRecord) float64 { return r.SSEP99US }).Median
			s.CPUPerOpUS = over(func(r RunRecord) float64 { return r.CPUPerOpUS }).Median
			s.BytesPerOp = over(bytes).Median
			s.ObjectsPerOp = over(func(r RunRecord) float64 { return r.ObjectsPerOp }).Median
			s.VsBaseline = harness.SpreadOf(roundRatios(res.Runs, store, sn, Baseline, ops))
			s.VsReference = harness.SpreadOf(roundRatios(res.Runs, store, sn, Reference, ops))
			s.BytesVsBaseline = harness.SpreadOf(roundRatios(res.Runs, store, sn, Baseline, bytes))
			ss.Servers = append(ss.Servers, s)
		}
		if len(ss.Servers) > 0 {
			out = append(out, ss)
		}
	}
	return out
}

// roundRatios returns, for every round in which both server and ref ran
// clean, v(server)/v(ref).
func roundRatios(runs []RunRecord, store, server, ref string, v func(RunRecord) float64) []float64 {
	return harness.RoundRatios(runs, server, ref, func(r RunRecord) (string, int, bool, float64) {
		return r.Server, r.Round, r.Store == store && !r.Flagged, v(r)
	})
}

// WriteReport writes results.json, results.md and the PNG charts into dir.
func WriteReport(res *Results, dir string) error {
	return harness.WriteResults(dir, res, func() ([]string, error) { return writeCharts(res, dir) },
		func(w io.Writer, charts []string) { writeMarkdown(w, res, charts) })
}

// Rereport rewrites results.md and the charts in dir from its
// results.json, for a report format changed after the run.
func Rereport(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	res.Summary = Summarize(&res)
	return WriteReport(&res, dir)
}

func writeCharts(res *Results, dir string) ([]string, error) {
	var files []string
	for _, ss := range res.Summary {
		var names []string
		var vals []harness.Spread
		for _, s := range ss.Servers {
			names = append(names, s.Server)
			vals = append(vals, s.OpsPerSec)
		}
		name := "ops-" + ss.Store + ".png"
		if err := harness.BarChart(filepath.Join(dir, name),
			fmt.Sprintf("event store, %s: ops/s (median of rounds, whiskers min–max)", ss.Store),
			"operations per second", names, vals); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	var stores, servers []string
	for _, ss := range res.Summary {
		stores = append(stores, ss.Store)
	}
	for _, sn := range res.Config.Servers {
		if sn != Baseline {
			servers = append(servers, sn)
		}
	}
	for _, c := range []struct {
		file, title string
		ratio       func(*ServerSummary) harness.Spread
	}{
		{"ratio-nethttp.png", "event store: ops/s relative to net/http (median of per-round ratios, whiskers min–max)",
			func(s *ServerSummary) harness.Spread { return s.VsBaseline }},
		{"bytes-nethttp.png", "event store: bytes allocated per op relative to net/http (lower is better)",
			func(s *ServerSummary) harness.Spread { return s.BytesVsBaseline }},
	} {
		ok, err := harness.RatioChart(filepath.Join(dir, c.file), c.title, "× net/http", stores, servers,
			func(store, server string) harness.Spread {
				if s := find(res, store, server); s != nil {
					return c.ratio(s)
				}
				return harness.Spread{}
			})
		if err != nil {
			return files, err
		}
		if ok {
			files = append(files, c.file)
		}
	}
	return files, nil
}

func find(res *Results, store, server string) *ServerSummary {
	for _, ss := range res.Summary {
		if ss.Store != store {
			continue
		}
		for i := range ss.Servers {
			if ss.Servers[i].Server == server {
				return &ss.Servers[i]
			}
		}
	}
	return nil
}

func ratio(s harness.Spread) string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

func writeMarkdown(w io.Writer, res *Results, charts []string) {
	c, m := res.Config, res.Meta
	fmt.Fprintf(w, "# Event-store benchmark, %s\n\n", m.Date.Format("2006-01-02 15:04 UTC"))
	if res.Interrupted {
		fmt.Fprintf(w, "**Interrupted: partial results.**\n\n")
	}
	fmt.Fprintf(w, "Command: `%s`\n\n", c.Command)
	fmt.Fprintf(w, "Machine: %s, %s, nproc %d, kernel %s; %s; commit %s.\n\n", m.Machine, m.CPUModel, m.NProc, m.Kernel, m.GoVersion, m.Commit)
	fmt.Fprintf(w, "Load: %d keep-alive connections (Go net/http client, gzip accepted), %d%% stream reads (last 10 events), "+
		"%d%% appends (expected version; a conflict refreshes with last_version), %d%% category reads (50 events, gzipped) over %d streams "+
		"in %d categories (seeded with %d events each); %d SSE subscribers, one category each. %d rounds × %s per server, order rotated, warm-up %s.\n\n",
		c.Conns, c.Mix.Reads, c.Mix.Appends, 100-c.Mix.Reads-c.Mix.Appends, c.Streams, 10, c.SeedEvents, c.Subscribers, c.Rounds, c.Duration, c.Warmup)
	fmt.Fprintf(w, "Ratios are medians (min–max) of per-round ratios; other figures medians over clean rounds. "+
		"CPU µs/op is the server's user+system time from /proc; bytes/op and objects/op are from the server's runtime/metrics; "+
		"an operation is one completed RPC; SSE p99 is the 99th percentile of append acknowledged → event received.\n\n")
	for _, ss := range res.Summary {
		fmt.Fprintf(w, "## Store: %s\n\n", ss.Store)
		fmt.Fprintf(w, "| server | ops/s | × nethttp | × fasthttp-native | p50 | p99 | SSE p99 | CPU µs/op | bytes/op | bytes × nethttp | objects/op | peak RSS | flagged |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range ss.Servers {
			n := s.OpsPerSec.N
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s | %.0f | %s | %d/%d |\n",
				s.Server, harness.FormatCount(s.OpsPerSec.Median, n), ratio(s.VsBaseline), ratio(s.VsReference),
				harness.FormatMicros(s.P50US, n), harness.FormatMicros(s.P99US, n), harness.FormatMicros(s.SSEP99US, n),
				s.CPUPerOpUS, harness.FormatCount(s.BytesPerOp, n), ratio(s.BytesVsBaseline), s.ObjectsPerOp,
				harness.FormatMiB(s.PeakRSS), s.Flagged, s.Runs)
		}
		fmt.Fprintln(w)
	}
	if len(res.Profiles) > 0 || len(res.Allocs) > 0 {
		fmt.Fprintf(w, "## Profile split\n\nThe measured runs only: CPU profiles from the server's /debug/pprof/profile during each run, allocation profiles "+
			"from /debug/pprof/allocs before and after each run (the difference), merged over rounds. HTTP layer: the server library, "+
			"net, bufio and the syscalls they make; handler API: the net/http functions the handlers call themselves (ServeMux, Header, "+
			"Request.WithContext, MaxBytesReader, ResponseController, URL.Query), the same code under every server while the handlers are unchanged; "+
			"application: the event-store code and middleware, encoding/json, log/slog, database/sql, SQLite (its file I/O included), gzip; "+
			"runtime: samples with neither on the stack (GC workers, scheduler). Runtime frames under a caller count for that caller. "+
			"Per op: the profile's total over the operations of the profiled runs (sampled profiles: estimates).\n\n")
		fmt.Fprintf(w, "| store/server | profile | total | per op | HTTP layer | handler API | application | runtime only | command |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, store := range c.Stores {
			for _, sn := range c.Servers {
				ops := 0.0
				for _, r := range res.Runs {
					if r.Store == store && r.Server == sn {
						ops += float64(r.Ops)
					}
				}
				pct := func(p, total float64, unit string) string {
					if ops == 0 {
						return fmt.Sprintf("%.0f%%", p)
					}
					return fmt.Sprintf("%.0f%% (%.0f %s)", p, total*p/100/ops, unit)
				}
				if sp, ok := res.Profiles[store+"/"+sn]; ok {
					t, u := sp.TotalSeconds*1e6, "µs"
					fmt.Fprintf(w, "| %s/%s | CPU | %.1f s | %.1f µs | %s | %s | %s | %s | `%s` |\n", store, sn, sp.TotalSeconds, t/max(ops, 1),
						pct(sp.HTTPPct, t, u), pct(sp.HandlerAPIPct, t, u), pct(sp.AppPct, t, u), pct(sp.RuntimePct, t, u), sp.ProfileCommand)
				}
				if sp, ok := res.Allocs[store+"/"+sn]; ok {
					t, u := sp.TotalBytes, "B"
					fmt.Fprintf(w, "| %s/%s | bytes | %.0f MiB | %.0f B | %s | %s | %s | %s | `%s` |\n", store, sn, sp.TotalBytes/(1<<20), t/max(ops, 1),
						pct(sp.HTTPPct, t, u), pct(sp.HandlerAPIPct, t, u), pct(sp.AppPct, t, u), pct(sp.RuntimePct, t, u), sp.ProfileCommand)
				}
			}
		}
		fmt.Fprintln(w)
	}
	for _, ch := range charts {
		fmt.Fprintf(w, "![%s](%s)\n\n", strings.TrimSuffix(ch, ".png"), ch)
	}
	var flagged []string
	for _, r := range res.Runs {
		if r.Flagged {
			flagged = append(flagged, fmt.Sprintf("- %s/%s round %d: %s", r.Store, r.Server, r.Round, r.Flag))
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintf(w, "## Flagged runs (excluded)\n\n%s\n", strings.Join(flagged, "\n"))
	}
}

// printSummary prints one store's compact table.
func printSummary(w io.Writer, res *Results, store string) {
	for _, ss := range res.Summary {
		if ss.Store != store {
			continue
		}
		fmt.Fprintf(w, "%s:\n", store)
		for _, s := range ss.Servers {
			fmt.Fprintf(w, "  %-16s %9s ops/s  ×nethttp %-18s ×fasthttp-native %-18s SSE p99 %-9s %6.1f µs CPU/op %8s B/op flagged %d/%d\n",
				s.Server, harness.FormatCount(s.OpsPerSec.Median, s.OpsPerSec.N), ratio(s.VsBaseline), ratio(s.VsReference),
				harness.FormatMicros(s.SSEP99US, s.OpsPerSec.N), s.CPUPerOpUS, harness.FormatCount(s.BytesPerOp, s.OpsPerSec.N), s.Flagged, s.Runs)
		}
	}
}
