package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]CPUSet{
		"":            nil,
		"0":           {0},
		"0-3,8,10-11": {0, 1, 2, 3, 8, 10, 11},
		" 10-11 , 0 ": {0, 10, 11},
		"4-15":        {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		"7,5,6":       {5, 6, 7},
		"3-3":         {3},
	} {
		got, err := ParseCPUList(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"a", "1-", "-1", "3-1", "0,,1", "1,1", "0-2,2", "1.5", "99999999"} {
		if got, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", bad, got)
		}
	}
	for in, want := range map[string]string{"0-3,8,10-11": "0-3,8,10-11", "11,10,0,2,1": "0-2,10-11", "5": "5", "": ""} {
		set, _ := ParseCPUList(in)
		if got := set.String(); got != want {
			t.Errorf("ParseCPUList(%q).String() = %q, want %q", in, got, want)
		}
	}
}

func readTopology(t *testing.T, name string) Topology {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "topology", name))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ParseLscpu(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func mustSet(t *testing.T, s string) CPUSet {
	t.Helper()
	set, err := ParseCPUList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestParseLscpu(t *testing.T) {
	// 16 cores without SMT, plus an offline CPU 16.
	topo := readTopology(t, "lscpu-16.txt")
	if got := topo.Online().String(); got != "0-15" {
		t.Errorf("online CPUs = %s, want 0-15 (CPU 16 is offline)", got)
	}
	// Columns in another order: CPU NODE SOCKET CORE; CPU 13 is core 5, node 1.
	smt := readTopology(t, "lscpu-smt16.txt")
	if c := smt.CPUs[13]; c != (CPUInfo{CPU: 13, Core: 5, Socket: 0, Node: 1}) {
		t.Errorf("CPU 13 = %+v, want core 5, socket 0, node 1", c)
	}
	if _, err := ParseLscpu("CPU NODE\n0 0\n"); err == nil {
		t.Error("lscpu output without CORE and SOCKET parsed without error")
	}
}

func TestReadSysfsTopology(t *testing.T) {
	// Two sockets of two cores with two threads; core_id repeats across
	// sockets (it is per package): cpu0 and cpu2 are siblings (socket 0
	// core 0), cpu4 and cpu6 too (socket 1 core 0).
	topo, err := ReadSysfsTopology(filepath.Join("testdata", "topology", "sysfs-2s"))
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Online().String(); got != "0-7" {
		t.Fatalf("online = %s, want 0-7 (cpufreq is not a CPU)", got)
	}
	if c := topo.CPUs[6]; c != (CPUInfo{CPU: 6, Core: 0, Socket: 1, Node: 1}) {
		t.Errorf("cpu6 = %+v, want core 0 socket 1 node 1", c)
	}
	if !strings.Contains(topo.Raw, "  6    0      1    1") {
		t.Errorf("raw topology lacks cpu6's line:\n%s", topo.Raw)
	}
	// Same core_id on different sockets is not a shared core.
	if err := CheckSets(mustSet(t, "0,1"), mustSet(t, "4,5"), topo); err != nil {
		t.Errorf("sockets 0 and 1 refused: %v", err)
	}
	err = CheckSets(mustSet(t, "0,1"), mustSet(t, "2,3"), topo)
	if err == nil || !strings.Contains(err.Error(), "physical core") {
		t.Errorf("CPUs 0 and 2 (socket 0 core 0) accepted on both sides: %v", err)
	}
}

func TestCheckSets(t *testing.T) {
	flat := readTopology(t, "lscpu-16.txt")
	smt := readTopology(t, "lscpu-smt16.txt")
	tests := []struct {
		name         string
		server, load string
		topo         Topology
		refuse       string // "" accepts
	}{
		{"4 servers, load on 12, no SMT", "0-3", "4-15", flat, ""},
		{"8 and 8, no SMT", "0-7", "8-15", flat, ""},
		{"one side unpinned", "0-3", "", flat, ""},
		{"overlap", "0-4", "4-15", flat, "overlap: CPU 4"},
		{"offline CPU", "0-3", "4-16", flat, "CPU 16 is not online"},
		{"SMT siblings split", "0-3", "4-15", smt, "physical core"},
		{"whole cores each side", "0-3,8-11", "4-7,12-15", smt, ""},
		{"sibling of a server CPU in the load", "0-1,8", "9", smt, "CPUs 1 and 9"},
	}
	for _, tc := range tests {
		err := CheckSets(mustSet(t, tc.server), mustSet(t, tc.load), tc.topo)
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.refuse)
		}
	}
}

func TestScaleFor(t *testing.T) {
	tests := []struct {
		name         string
		server, load string
		conns, per   int
		want         Scale
	}{
		{"unpinned: every CPU, wrk -t1 -c50", "", "", 0, 32, Scale{ServerThreads: 16, LoadThreads: 1, Connections: 50}},
		{"2-vCPU pinning keeps 50", "0", "1", 0, 32, Scale{ServerThreads: 1, LoadThreads: 1, Connections: 50}},
		{"4 servers, 12 load threads", "0-3", "4-15", 0, 32, Scale{ServerThreads: 4, LoadThreads: 12, Connections: 384}},
		{"8 and 8", "0-7", "8-15", 0, 32, Scale{ServerThreads: 8, LoadThreads: 8, Connections: 256}},
		{"-conns-per-thread 64", "0-7", "8-15", 0, 64, Scale{ServerThreads: 8, LoadThreads: 8, Connections: 512}},
		{"-connections wins", "0-3", "4-15", 100, 32, Scale{ServerThreads: 4, LoadThreads: 12, Connections: 100}},
		{"list form", "0-3,8,10-11", "4-7", 0, 32, Scale{ServerThreads: 7, LoadThreads: 4, Connections: 128}},
	}
	for _, tc := range tests {
		got := ScaleFor(mustSet(t, tc.server), mustSet(t, tc.load), tc.conns, tc.per, DefaultConnections, 16)
		if got != tc.want {
			t.Errorf("%s: ScaleFor = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// Never more load threads than connections (wrk and h2load refuse it).
	sc := Scale{LoadThreads: 12}
	if got := sc.loadThreads(4); got != 4 {
		t.Errorf("loadThreads(4) with 12 load CPUs = %d, want 4", got)
	}
	if got := sc.loadThreads(1000); got != 12 {
		t.Errorf("loadThreads(1000) = %d, want 12", got)
	}
}

func TestThreadsFollowServerSet(t *testing.T) {
	for cpus, want := range map[string]int{"0": 1, "0,1": 2, "0-3": 4, "0-1,4": 3, "0-3,8,10-11": 7} {
		if got := serverThreads(cpus); got != want {
			t.Errorf("serverThreads(%q) = %d, want %d", cpus, got, want)
		}
	}
	// The load generators' command lines carry the load set's threads.
	w, _ := LookupWorkload("plaintext")
	wa := wrkRun{wrk: "wrk", script: "s.lua", addr: "127.0.0.1:1", w: w, conns: 384, duration: 1e9, cpus: "4-15", threads: 12}.args()
	if !slices.Contains(wa, "-t12") || !slices.Contains(wa, "-c384") || wa[0] != "taskset" || wa[2] != "4-15" {
		t.Errorf("wrk args = %v, want taskset -c 4-15 wrk -t12 -c384", wa)
	}
	h, _ := LookupWorkload("h2c")
	ha := h2loadRun{h2load: "h2load", addr: "127.0.0.1:1", w: h, conns: 8, duration: 1e9, threads: 12}.args()
	if !slices.Contains(ha, "-t8") || !slices.Contains(ha, "-c8") {
		t.Errorf("h2load args = %v, want -t8 (capped at -c8)", ha)
	}
	if got := w.LoadCommand(384, 12); got != "wrk -t12 -c384" {
		t.Errorf("LoadCommand = %q", got)
	}
	// nginx gets one worker process per server CPU.
	dir := t.TempDir()
	conf, err := writeNginxConf(dir, 8080, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(conf)
	if !strings.Contains(string(b), "worker_processes 4;") {
		t.Errorf("nginx.conf lacks worker_processes 4:\n%s", b)
	}
}

// TestCeilingRatios checks the ×ceiling ratios the multi-core runs are
// judged by: per round against the C ceiling over HTTP/1.1 and against h2o
// over HTTP/2, flagged rounds left out.
func TestCeilingRatios(t *testing.T) {
	res := &Results{
		Config:    Config{Connections: 384, Scale: Scale{ServerThreads: 4, LoadThreads: 12, Connections: 384}},
		Servers:   []string{"riptide", "ceiling", "h2o"},
		Workloads: []string{"pipelined", "h2c"},
		PeakRSS:   map[string]int64{},
		Runs: []RunRecord{
			{Workload: "pipelined", Server: "riptide", Round: 1, WrkStats: WrkStats{RPS: 300}},
			{Workload: "pipelined", Server: "ceiling", Round: 1, WrkStats: WrkStats{RPS: 600}},
			{Workload: "pipelined", Server: "riptide", Round: 2, WrkStats: WrkStats{RPS: 400}},
			{Workload: "pipelined", Server: "ceiling", Round: 2, WrkStats: WrkStats{RPS: 500}},
			{Workload: "pipelined", Server: "riptide", Round: 3, WrkStats: WrkStats{RPS: 900}},
			{Workload: "pipelined", Server: "ceiling", Round: 3, WrkStats: WrkStats{RPS: 1}, Flagged: true, Flag: "server exited"},
			{Workload: "h2c", Server: "riptide", Round: 1, WrkStats: WrkStats{RPS: 740}},
			{Workload: "h2c", Server: "h2o", Round: 1, WrkStats: WrkStats{RPS: 1000}},
		},
	}
	res.Summary = Summarize(res)
	got := map[string]Spread{}
	for _, ws := range res.Summary {
		for _, ss := range ws.Servers {
			got[ws.Workload+"/"+ss.Server] = ss.VsCeiling
		}
	}
	if r := got["pipelined/riptide"]; r.N != 2 || r.Min != 0.5 || r.Max != 0.8 || r.Median != 0.65 {
		t.Errorf("pipelined riptide ×ceiling = %+v, want 0.5 and 0.8 (round 3 flagged)", r)
	}
	if r := got["h2c/riptide"]; r.N != 1 || r.Median != 0.74 {
		t.Errorf("h2c riptide ×h2o = %+v, want 0.74", r)
	}
	if ws := res.Summary[0]; ws.Load != "wrk -t12 -c384" {
		t.Errorf("pipelined load = %q, want wrk -t12 -c384", ws.Load)
	}
	var md strings.Builder
	writeMarkdown(&md, res, nil)
	for _, want := range []string{"## Throughput relative to the ceiling", "| riptide | 0.65 (0.50–0.80) | 0.74 (0.74–0.74) |", "h2c (×h2o)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md.String())
		}
	}
}

func TestResolveSets(t *testing.T) {
	flat := readTopology(t, "lscpu-16.txt")
	smt := readTopology(t, "lscpu-smt16.txt") // CPU n and n+8 share core n
	limited := smt
	limited.Allowed = mustSet(t, "0-5,8-15") // CPUs 6 and 7 outside the cpuset: cores 6 and 7 unusable
	tests := []struct {
		name                 string
		serverArg, loadArg   string
		topo                 Topology
		wantServer, wantLoad string
		wantErr              string
	}{
		{"auto:4 on 16 cores", "auto:4", "rest", flat, "0-3", "4-15", ""},
		{"auto:8 on 16 cores", "auto:8", "rest", flat, "0-7", "8-15", ""},
		{"auto:4 takes whole SMT cores", "auto:4", "rest", smt, "0-1,8-9", "2-7,10-15", ""},
		{"auto:3 rounds up to whole cores", "auto:3", "rest", smt, "0-1,8-9", "2-7,10-15", ""},
		{"explicit list, rest of the cores", "0-1,8-9", "rest", smt, "0-1,8-9", "2-7,10-15", ""},
		{"rest leaves a half-used core out", "0", "rest", smt, "0", "1-7,9-15", ""},
		{"rest skips cores outside the cpuset", "auto:4", "rest", limited, "0-1,8-9", "2-5,10-13", ""},
		{"plain lists pass through", "0-3", "4-15", flat, "0-3", "4-15", ""},
		{"too many", "auto:17", "rest", flat, "", "", "only 16 usable"},
		{"nothing left", "auto:16", "rest", flat, "", "", "no usable core left"},
		{"bad auto", "auto:x", "rest", flat, "", "", "auto:N"},
	}
	for _, tc := range tests {
		s, l, err := ResolveSets(tc.serverArg, tc.loadArg, tc.topo)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || s.String() != tc.wantServer || l.String() != tc.wantLoad {
			t.Errorf("%s: got %s / %s, %v; want %s / %s", tc.name, s, l, err, tc.wantServer, tc.wantLoad)
			continue
		}
		if err := CheckSets(s, l, tc.topo); err != nil {
			t.Errorf("%s: the resolved sets are refused: %v", tc.name, err)
		}
	}
	// CheckSets refuses a CPU outside the cpuset.
	if err := CheckSets(mustSet(t, "0-3"), mustSet(t, "6"), limited); err == nil || !strings.Contains(err.Error(), "cpuset") {
		t.Errorf("CPU 6 outside the cpuset accepted: %v", err)
	}
}

func TestReadAllowed(t *testing.T) {
	for dir, want := range map[string]string{"cgroup2": "0-5", "cgroup1": "0-3,8-11", "sysfs-2s": ""} {
		if got := readAllowed(filepath.Join("testdata", "topology", dir)).String(); got != want {
			t.Errorf("readAllowed(%s) = %q, want %q", dir, got, want)
		}
	}
}
