package esbench

import (
	"math"
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
