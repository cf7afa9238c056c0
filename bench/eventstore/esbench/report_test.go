package esbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/bench/eventstore/load"
)

func TestSummarizeRatiosPerRound(t *testing.T) {
	run := func(server string, round int, ops, bytes float64, flagged bool) RunRecord {
		return RunRecord{Store: "memory", Server: server, Round: round, OpsPerSec: ops, BytesPerOp: bytes,
			Flagged: flagged, Result: load.Result{P99US: ops / 10}}
	}
	res := &Results{Config: Config{Stores: []string{"memory"}, Servers: []string{"nethttp", "riptide-compat", "fasthttp-native"}},
		Runs: []RunRecord{
			run("nethttp", 1, 1000, 100, false), run("riptide-compat", 1, 1200, 60, false), run("fasthttp-native", 1, 1100, 70, false),
			run("nethttp", 2, 2000, 100, false), run("riptide-compat", 2, 2600, 50, false), run("fasthttp-native", 2, 2000, 70, false),
			// A flagged round counts for nothing.
			run("nethttp", 3, 1, 100, true), run("riptide-compat", 3, 9000, 50, false), run("fasthttp-native", 3, 1, 70, false),
		}}
	sum := Summarize(res)
	if len(sum) != 1 || len(sum[0].Servers) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	rc := sum[0].Servers[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// Per-round ratios 1.2 and 1.3 (round 3 has no clean nethttp run).
	if rc.VsBaseline.N != 2 || !near(rc.VsBaseline.Median, 1.25) || !near(rc.VsBaseline.Min, 1.2) || !near(rc.VsBaseline.Max, 1.3) {
		t.Errorf("vs nethttp %+v, want median 1.25 of 1.2 and 1.3", rc.VsBaseline)
	}
	if rc.BytesVsBaseline.N != 2 || !near(rc.BytesVsBaseline.Median, 0.55) {
		t.Errorf("bytes vs nethttp %+v, want median 0.55", rc.BytesVsBaseline)
	}
	// Against fasthttp-native: 1200/1100, 2600/2000, 9000/1.
	if rc.VsReference.N != 3 || !near(rc.VsReference.Median, 1.3) {
		t.Errorf("vs fasthttp-native %+v, want median 1.3 over 3 rounds", rc.VsReference)
	}
	if nh := sum[0].Servers[0]; nh.Runs != 3 || nh.Flagged != 1 || nh.OpsPerSec.N != 2 || nh.OpsPerSec.Median != 1500 {
		t.Errorf("nethttp %+v, want 2 clean runs of 3, median 1500", nh)
	}
}

func TestWriteReport(t *testing.T) {
	res := &Results{Config: Config{Stores: []string{"sqlite", "memory"}, Servers: []string{"nethttp", "riptide-compat", "fasthttp-native"},
		Rounds: 1, Command: "go -C bench run ./cmd/eventstore-bench -quick"}, PeakRSS: map[string]int64{"memory/nethttp": 30 << 20}}
	for _, store := range res.Config.Stores {
		for i, sn := range res.Config.Servers {
			res.Runs = append(res.Runs, RunRecord{Store: store, Server: sn, Round: 1, OpsPerSec: float64(1000 * (i + 1)),
				BytesPerOp: float64(10000 - 1000*i)})
		}
	}
	res.Runs = append(res.Runs, RunRecord{Store: "memory", Server: "nethttp", Round: 2, Flagged: true, Flag: "3 errors, first: boom"})
	res.Summary = Summarize(res)
	dir := t.TempDir()
	if err := WriteReport(res, dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Store: sqlite", "## Store: memory",
		"| riptide-compat | 2,000 | 2.00 (2.00–2.00) | 0.67 (0.67–0.67) |",
		"| 0.90 (0.90–0.90) |", // riptide-compat's bytes/op against nethttp
		"30.0 MiB", "memory/nethttp round 2: 3 errors, first: boom",
		"![ratio-nethttp](ratio-nethttp.png)", "![bytes-nethttp](bytes-nethttp.png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q", want)
		}
	}
	// Rereport round-trips results.json and rewrites the same report.
	before, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := Rereport(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	md2, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if string(before) != string(after) || string(md) != string(md2) {
		t.Error("Rereport changed results.json or results.md")
	}
	for _, f := range []string{"results.json", "ops-sqlite.png", "ops-memory.png", "ratio-nethttp.png", "bytes-nethttp.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
