package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Config is one benchmark run's configuration.
type Config struct {
	// Root is the bench module root (where go.mod, servers/ and ceiling/ are).
	Root string `json:"-"`
	// Servers and Workloads to run, in report order.
	Servers   []Server   `json:"-"`
	Workloads []Workload `json:"-"`
	// Rounds per workload; each round runs every server once.
	Rounds int `json:"rounds"`
	// Duration of each measured wrk run.
	Duration time.Duration `json:"duration_ns"`
	// Warmup is the length of the unmeasured wrk run per server and workload.
	Warmup time.Duration `json:"warmup_ns"`
	// Connections is wrk's -c for workloads that do not fix their own; 0
	// derives it from the load set (ScaleFor: ConnsPerThread × its size,
	// at least 50). Run records the value used.
	Connections int `json:"connections"`
	// IdleConns is the idle workloads' connection count when not zero
	// (-connections; Workload.idleConns); Run sets it from Connections
	// as given, before it derives the load generator's.
	IdleConns int `json:"idle_connections,omitempty"`
	// ConnsPerThread is the connections per load-generator thread when
	// Connections is 0 and WrkCPUs is set (0: DefaultConnsPerThread).
	ConnsPerThread int `json:"conns_per_thread,omitempty"`
	// ServerCPUs and WrkCPUs pin with `taskset -c` when non-empty
	// (multi-core mode): the servers get as many threads (GOMAXPROCS,
	// workers) as ServerCPUs has CPUs, wrk and h2load as many threads as
	// WrkCPUs has. Run refuses sets that overlap or share a physical core.
	ServerCPUs string `json:"server_cpus"`
	WrkCPUs    string `json:"wrk_cpus"`
	// Scale is what the sets gave each side; set by Run.
	Scale Scale `json:"scale"`
	// Topology is the machine's CPU topology, read by Run when a set is
	// given (nil otherwise).
	Topology *Topology `json:"topology,omitempty"`
	// WSConns, when positive, replaces the connection count of every
	// WebSocket workload (wsidle's idle connections, wsecho's
	// connections, wsbroadcast's subscribers).
	WSConns int `json:"ws_conns,omitempty"`
	// WSGoroutines drives the WebSocket workloads' connections with a
	// goroutine each (the portable client) instead of the epoll client;
	// WSSpin is the epoll client's WSClientSpin, recorded.
	WSGoroutines bool          `json:"ws_goroutines,omitempty"`
	WSSpin       time.Duration `json:"ws_spin_ns,omitempty"`
	// Prebuilt, when set, is a directory holding every server binary
	// already built (a packed multi-core kit): Run builds nothing and
	// needs neither go nor cc.
	Prebuilt string `json:"prebuilt,omitempty"`
	// Build describes how Prebuilt's binaries were made (recorded in
	// place of this machine's go, git and cc).
	Build *BuildInfo `json:"build,omitempty"`
	// OutDir receives the results.
	OutDir string `json:"-"`
	// Command is the command line, recorded in the report.
	Command string `json:"command"`
	// Progress receives the live progress line; ProgressTTY redraws it in
	// place instead of printing one line per step.
	Progress    io.Writer `json:"-"`
	ProgressTTY bool      `json:"-"`
	// Log receives messages and per-workload summaries.
	Log io.Writer `json:"-"`
}

// RunRecord is one measured wrk run of one server.
type RunRecord struct {
	Workload string `json:"workload"`
	Server   string `json:"server"`
	Round    int    `json:"round"` // 1-based
	Position int    `json:"position"`
	WrkStats
	// CPUSeconds is the server's user+system CPU time during the run.
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPUPerReqUS is CPUSeconds per completed request, in microseconds.
	CPUPerReqUS float64 `json:"cpu_us_per_request"`
	// CPUPerMBUS is CPUSeconds per megabyte (10^6) of response bodies, in
	// microseconds (HTTP/3 workloads, which count body bytes).
	CPUPerMBUS float64 `json:"cpu_us_per_mb,omitempty"`
	// LoadCPUPerReqUS is the load generator's CPU time (LoadCPUSeconds)
	// per completed request, in microseconds (WebSocket workloads, whose
	// client runs in the harness).
	LoadCPUPerReqUS float64 `json:"load_cpu_us_per_request,omitempty"`
	// ServerBusyPct and LoadBusyPct are CPUSeconds and the load
	// generator's LoadCPUSeconds as a percentage of one CPU over the run
	// (HTTP/3 workloads): near 100 × the CPUs of its set, that side
	// bounded the run.
	ServerBusyPct float64 `json:"server_busy_pct,omitempty"`
	LoadBusyPct   float64 `json:"load_busy_pct,omitempty"`
	// ServerSetBusyPct and ServerSetIRQPct are, for HTTP/3 runs with the
	// servers pinned, how busy the servers' CPU set was over the run and
	// how much of its time went to hard and soft interrupts (percent of
	// the set's time, every process on it counted): a set near 100%
	// busy bounded the run even where the server's own CPU is lower.
	ServerSetBusyPct float64 `json:"server_set_busy_pct,omitempty"`
	ServerSetIRQPct  float64 `json:"server_set_irq_pct,omitempty"`
	// Flagged runs (errors, non-2xx, a dead server) are excluded from the
	// medians and ratios and listed in the report.
	Flagged bool   `json:"flagged"`
	Flag    string `json:"flag,omitempty"`
	// Raw is the raw wrk output file, relative to the results directory.
	Raw string `json:"raw"`
}

// Skip records a server left out of a run or a workload.
type Skip struct {
	Server   string `json:"server"`
	Workload string `json:"workload,omitempty"`
	Reason   string `json:"reason"`
}

// Results is everything a run produced; it is written as results.json.
type Results struct {
	Meta        SysInfo           `json:"meta"`
	Config      Config            `json:"config"`
	Servers     []string          `json:"servers"`
	Workloads   []string          `json:"workloads"`
	Skipped     []Skip            `json:"skipped,omitempty"`
	Runs        []RunRecord       `json:"runs"`
	PeakRSS     map[string]int64  `json:"peak_rss_bytes"` // key "workload/server"
	Summary     []WorkloadSummary `json:"summary"`
	Interrupted bool              `json:"interrupted,omitempty"`
	Elapsed     time.Duration     `json:"elapsed_ns"`
}

// Run builds the servers, runs every workload in interleaved rounds and
// returns the results. On cancellation or failure it returns the results
// gathered so far along with the error; every server it started is stopped
// before it returns.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	start := time.Now()
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Rounds < 1 || cfg.Duration <= 0 || cfg.Connections < 0 || cfg.ConnsPerThread < 0 {
		return nil, errors.New("rounds and duration must be positive, connections not negative")
	}
	cfg.IdleConns = cfg.Connections
	if err := cfg.resolveCPUs(ctx); err != nil {
		return nil, err
	}
	if cfg.ServerCPUs != "" && cfg.WrkCPUs != "" {
		// Keep the harness's own threads off the servers' CPUs: onto the
		// load set, every thread (-a). Unpinned servers would inherit
		// this mask, so only when the servers are pinned.
		if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cfg.WrkCPUs, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			fmt.Fprintf(cfg.Log, "warning: could not pin the harness to CPUs %s: %v %s\n", cfg.WrkCPUs, err, out)
		}
	}
	// wrk takes whole seconds; record what actually runs.
	cfg.Duration = time.Duration(wholeSeconds(cfg.Duration)) * time.Second
	if cfg.Warmup > 0 {
		cfg.Warmup = time.Duration(wholeSeconds(cfg.Warmup)) * time.Second
	}
	defer Cleanup()

	var (
		tools    loadTools
		noH3rs   error // why the Rust HTTP/3 client is unavailable
		skippedW []Skip
	)
	selected := cfg.Workloads
	cfg.Workloads = nil
	for _, w := range selected {
		var err error
		switch {
		case w.Tool() == "wrk":
			if tools.wrk == "" {
				tools.wrk, err = EnsureWrk(ctx, cfg.Log)
			}
		case w.Tool() == "h2load":
			if tools.h2load == "" {
				tools.h2load, err = EnsureH2load(ctx, cfg.Log)
			}
		case w.RustH3:
			// Built once per run; a workload without it is skipped,
			// not the run failed.
			if tools.h3rs == "" && noH3rs == nil {
				tools.h3rs, noH3rs = EnsureH3rs(ctx, cfg.Root, cfg.Prebuilt, cfg.Log)
			}
			if noH3rs != nil {
				fmt.Fprintf(cfg.Log, "skipping workload %s: %v\n", w.Name, noH3rs)
				skippedW = append(skippedW, Skip{Server: "every server", Workload: w.Name, Reason: noH3rs.Error()})
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		cfg.Workloads = append(cfg.Workloads, w.idleConns(cfg.IdleConns))
	}
	res := &Results{Config: cfg, PeakRSS: map[string]int64{}, Skipped: skippedW}
	var servers []Server
	for _, s := range cfg.Servers {
		avail := s.Available(cfg.Root)
		if cfg.Prebuilt != "" {
			avail = s.AvailablePrebuilt(cfg.Prebuilt)
		}
		if err := avail; err != nil {
			if s.Optional {
				res.Skipped = append(res.Skipped, Skip{Server: s.Name, Reason: err.Error()})
				fmt.Fprintf(cfg.Log, "skipping %s: %v\n", s.Name, err)
				continue
			}
			return nil, fmt.Errorf("server %s: %w", s.Name, err)
		}
		servers = append(servers, s)
		res.Servers = append(res.Servers, s.Name)
	}
	for _, w := range cfg.Workloads {
		res.Workloads = append(res.Workloads, w.Name)
	}
	binDir := filepath.Join(cfg.Root, "bin")
	if cfg.Prebuilt != "" {
		binDir = cfg.Prebuilt
		fmt.Fprintf(cfg.Log, "using the %d prebuilt servers in %s\n", len(servers), binDir)
	} else {
		fmt.Fprintf(cfg.Log, "building %d servers into %s\n", len(servers), binDir)
		if err := Build(ctx, cfg.Root, binDir, servers); err != nil {
			return nil, err
		}
	}
	res.Meta = CollectSysInfo(ctx, cfg.Root, tools.wrk, tools.h2load)
	if tools.h3rs != "" {
		res.Meta.H3rs = h3rsVersion(ctx, cfg.Root, tools.h3rs)
	}
	if cfg.Topology != nil {
		// The harness may itself be pinned (bench/mc/run.sh pins it to
		// the load set): count the machine's CPUs, not its own.
		res.Meta.NProc = len(cfg.Topology.CPUs)
	}
	if cfg.Build != nil {
		res.Meta.GoVersion, res.Meta.Commit, res.Meta.CC = cfg.Build.Go, cfg.Build.Commit, cfg.Build.CC
	}

	for _, d := range []string{"raw", "lua", "logs"} {
		if err := os.MkdirAll(filepath.Join(cfg.OutDir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if cfg.Topology != nil {
		txt := cfg.Topology.Raw
		if cfg.Topology.Allowed != nil {
			txt += "# cgroup cpuset: " + cfg.Topology.Allowed.String() + "\n"
		}
		txt += fmt.Sprintf("# servers: %s, load: %s\n", orAll(cfg.ServerCPUs), orAll(cfg.WrkCPUs))
		if err := os.WriteFile(filepath.Join(cfg.OutDir, "topology.txt"), []byte(txt), 0o644); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Log, "servers on CPUs %s (%d threads: GOMAXPROCS, workers), load on CPUs %s (%d threads, %d connections)\n",
		orAll(cfg.ServerCPUs), cfg.Scale.ServerThreads, orAll(cfg.WrkCPUs), cfg.Scale.LoadThreads, cfg.Connections)
	scripts, err := writeScripts(filepath.Join(cfg.OutDir, "lua"), cfg.Workloads)
	if err != nil {
		return nil, err
	}

	p := newProgress(cfg, servers)
	fmt.Fprintf(cfg.Log, "plan: %d workloads × %d rounds × up to %d servers, %s per run, warm-up %s: about %s\n",
		len(cfg.Workloads), cfg.Rounds, len(servers), cfg.Duration, cfg.Warmup, p.remaining().Round(time.Second))

	for _, w := range cfg.Workloads {
		if err := runWorkload(ctx, cfg, res, w, servers, tools, scripts[w.Name], binDir, p); err != nil {
			p.clear()
			res.Interrupted = true
			res.Elapsed = time.Since(start)
			res.Summary = Summarize(res)
			return res, err
		}
		p.clear()
		res.Summary = Summarize(res)
		printWorkloadSummary(cfg.Log, res, w.Name)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// resolveCPUs parses and checks the CPU sets against the machine's
// topology, and sets Scale and the connections.
func (cfg *Config) resolveCPUs(ctx context.Context) error {
	var server, load CPUSet
	if cfg.ServerCPUs != "" || cfg.WrkCPUs != "" {
		t, err := LoadTopology(ctx)
		if err != nil {
			return fmt.Errorf("reading the CPU topology for -server-cpus/-wrk-cpus: %w", err)
		}
		if server, load, err = ResolveSets(cfg.ServerCPUs, cfg.WrkCPUs, t); err != nil {
			return err
		}
		if err := CheckSets(server, load, t); err != nil {
			return err
		}
		cfg.Topology = &t
	}
	cfg.ServerCPUs, cfg.WrkCPUs = server.String(), load.String()
	per := cfg.ConnsPerThread
	if per == 0 {
		per = DefaultConnsPerThread
	}
	cfg.Scale = ScaleFor(server, load, cfg.Connections, per, DefaultConnections, runtime.NumCPU())
	cfg.Connections = cfg.Scale.Connections
	return nil
}

// DefaultConnections is the load generator's connections when neither
// -connections nor a load set says otherwise (the 2-vCPU default).
const DefaultConnections = 50

func orAll(cpus string) string {
	if cpus == "" {
		return "(all, unpinned)"
	}
	return cpus
}

// BuildInfo says how a packed kit's binaries were built.
type BuildInfo struct {
	Commit string `json:"commit"`
	Go     string `json:"go"`
	CC     string `json:"cc"`
	Packed string `json:"packed"` // UTC time
}

// loadTools are the load generators' paths ("" when no selected workload
// needs one).
type loadTools struct{ wrk, h2load, h3rs string }

// loadRun is one load-generator invocation: wrkRun or h2loadRun.
type loadRun interface {
	run(ctx context.Context) ([]byte, WrkStats, error)
}

// runWorkload starts every server supporting w, warms each up, runs the
// rounds and records peak RSS, then stops the servers.
func runWorkload(ctx context.Context, cfg Config, res *Results, w Workload, all []Server,
	tools loadTools, script, binDir string, p *progress) error {
	if w.WS != WSNone && cfg.WSConns > 0 {
		w.Conns = cfg.WSConns
	}
	conns := cfg.Connections
	if w.Conns > 0 {
		conns = w.Conns
	}
	var servers []Server
	for _, s := range all {
		if why := s.Unsupported(w); why == "" {
			servers = append(servers, s)
		} else {
			res.Skipped = append(res.Skipped, Skip{Server: s.Name, Workload: w.Name, Reason: why})
			fmt.Fprintf(cfg.Log, "skipping %s on %s: %s\n", s.Name, w.Name, why)
		}
	}
	rawDir := filepath.Join(cfg.OutDir, "raw", w.Name)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return err
	}
	// The servers' CPU set, whose use an HTTP/3 run reports (Run has
	// checked the list; empty when the servers are not pinned).
	serverSet, _ := ParseCPUList(cfg.ServerCPUs)
	procs := map[string]*Proc{}
	defer func() {
		for _, pr := range procs {
			pr.Stop()
		}
	}()
	logs := map[string]*os.File{}
	start := func(s Server) error {
		wl := w
		pr, err := Start(ctx, s, StartOptions{BinDir: binDir, Profile: "bench", Workload: &wl, CPUs: cfg.ServerCPUs, Log: logs[s.Name]})
		if err != nil {
			return err
		}
		procs[s.Name] = pr
		return nil
	}
	if w.Tool() == "idle" {
		// Before the servers start, so that those that do not raise
		// their own limit (h2o; Go programs raise theirs) inherit it.
		raiseNoFile(1 << 20)
	}
	for _, s := range servers {
		logf, err := os.Create(filepath.Join(cfg.OutDir, "logs", w.Name+"-"+s.Name+".log"))
		if err != nil {
			return err
		}
		defer logf.Close()
		logs[s.Name] = logf
		if err := start(s); err != nil {
			return err
		}
	}
	newRun := func(s Server, d time.Duration) loadRun {
		if w.WS != WSNone {
			return wsRun{proc: procs[s.Name], addr: procs[s.Name].Addr, w: w, duration: d, goroutines: cfg.WSGoroutines}
		}
		if w.Tool() == "idle" {
			return idleRun{proc: procs[s.Name], w: w}
		}
		if w.Tool() == "h3" && w.RustH3 {
			return h3rsRun{bin: tools.h3rs, addr: procs[s.Name].Addr, w: w, conns: conns, streams: w.h3Streams(), duration: d, cpus: cfg.WrkCPUs}
		}
		if w.Tool() == "h3" {
			return h3Run{addr: procs[s.Name].Addr, w: w, conns: conns, streams: w.h3Streams(), duration: d}
		}
		if w.Tool() == "h2load" {
			return h2loadRun{h2load: tools.h2load, addr: procs[s.Name].Addr, w: w, conns: conns, duration: d, cpus: cfg.WrkCPUs, threads: cfg.Scale.loadThreads(conns)}
		}
		return wrkRun{wrk: tools.wrk, script: script, addr: procs[s.Name].Addr, w: w, conns: conns, duration: d, cpus: cfg.WrkCPUs, threads: cfg.Scale.loadThreads(conns)}
	}
	if cfg.Warmup > 0 {
		for _, s := range servers {
			p.show(0, w.Name, s.Name, "warm-up")
			t := time.Now()
			out, _, err := newRun(s, cfg.Warmup).run(ctx)
			os.WriteFile(filepath.Join(rawDir, "warmup-"+s.Name+".txt"), out, 0o644)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				fmt.Fprintf(cfg.Log, "\nwarm-up of %s on %s failed: %v\n", s.Name, w.Name, err)
			}
			p.doneWarmup(time.Since(t))
		}
	}
	for slot := range Rounds(cfg.Rounds, len(servers)) {
		r, pos, s := slot.Round-1, slot.Position-1, servers[slot.Server]
		p.show(r+1, w.Name, s.Name, "")
		if (w.Tool() == "idle" || w.WS == WSIdle) && (r > 0 || cfg.Warmup > 0) {
			// A fresh process per idle run: memory a server kept
			// from the previous run would hide its cost.
			procs[s.Name].Stop()
			if err := start(s); err != nil {
				return err
			}
		}
		pr := procs[s.Name]
		rec := RunRecord{Workload: w.Name, Server: s.Name, Round: r + 1, Position: pos + 1,
			Raw: filepath.Join("raw", w.Name, fmt.Sprintf("r%d-%s.txt", r+1, s.Name))}
		t := time.Now()
		cpu0, _ := pr.CPUSeconds()
		set0, setErr := readCPUTimes(serverSet)
		out, st, err := newRun(s, cfg.Duration).run(ctx)
		cpu1, _ := pr.CPUSeconds()
		set1, setErr1 := readCPUTimes(serverSet)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		os.WriteFile(filepath.Join(cfg.OutDir, rec.Raw), out, 0o644)
		rec.WrkStats = st
		rec.CPUSeconds = cpu1 - cpu0
		if st.ServerCPUSeconds > 0 {
			rec.CPUSeconds = st.ServerCPUSeconds // the measured loop alone
		}
		if st.Requests > 0 {
			rec.CPUPerReqUS = rec.CPUSeconds / float64(st.Requests) * 1e6
			rec.setLoadCPU(w, st)
		}
		if w.HTTP3 || (w.WS != WSNone && w.WS != WSIdle) {
			rec.setBusy(st, time.Since(t))
			if len(serverSet) > 0 && setErr == nil && setErr1 == nil {
				rec.ServerSetBusyPct, rec.ServerSetIRQPct = set1.pcts(set0)
			}
		}
		rec.Flag = flagOf(st, err, pr)
		rec.Flagged = rec.Flag != ""
		res.Runs = append(res.Runs, rec)
		p.doneRun(time.Since(t))
	}
	for _, s := range servers {
		if rss, err := procs[s.Name].PeakRSS(); err == nil {
			res.PeakRSS[w.Name+"/"+s.Name] = rss
		}
	}
	return nil
}

// setBusy fills the HTTP/3 figures of rec from its CPUSeconds and the
// run's statistics: CPU per body megabyte and both sides' CPU use over the
// load's own duration (wall, the run with its setup, when it has none).
func (rec *RunRecord) setBusy(st WrkStats, wall time.Duration) {
	if st.Bytes > 0 {
		rec.CPUPerMBUS = rec.CPUSeconds / (float64(st.Bytes) / 1e6) * 1e6
	}
	secs := float64(st.DurationUS) / 1e6
	if secs <= 0 {
		secs = wall.Seconds()
	}
	if secs > 0 {
		rec.ServerBusyPct = 100 * rec.CPUSeconds / secs
		rec.LoadBusyPct = 100 * st.LoadCPUSeconds / secs
	}
}

// setLoadCPU sets the client's CPU per message of a WebSocket run (the
// client is the harness).
func (rec *RunRecord) setLoadCPU(w Workload, st WrkStats) {
	if w.WS != WSNone && st.Requests > 0 {
		rec.LoadCPUPerReqUS = st.LoadCPUSeconds / float64(st.Requests) * 1e6
	}
}

// flagOf says why a run must not be averaged silently, or "" if it is clean.
func flagOf(st WrkStats, err error, pr *Proc) string {
	var why []string
	if err != nil {
		why = append(why, err.Error())
	}
	if pr != nil && pr.Exited() {
		why = append(why, "server exited")
	}
	if st.Requests == 0 && (err == nil || st.Protocol != "") {
		why = append(why, "no requests completed")
	}
	if st.Protocol == "h3" && st.Failed > 0 {
		why = append(why, fmt.Sprintf("h3: %d failed requests", st.Failed))
	} else if st.Failed > 0 || st.Errored > 0 {
		// h2load: failed includes errored, which includes timeouts.
		why = append(why, fmt.Sprintf("h2load: %d failed requests (%d errored, %d timed out)",
			st.Failed, st.Errored, st.Timeout))
	} else if n := st.SocketErrors(); n > 0 {
		why = append(why, fmt.Sprintf("socket errors: connect %d, read %d, write %d, timeout %d",
			st.Connect, st.Read, st.Write, st.Timeout))
	}
	if st.Status > 0 && st.Protocol == "ws" {
		why = append(why, fmt.Sprintf("%d wrong WebSocket answers", st.Status))
	} else if st.Status > 0 {
		why = append(why, fmt.Sprintf("%d non-2xx/3xx responses", st.Status))
	}

	return strings.Join(why, "; ")
}

// progress draws the live "round, workload, server, ETA" line.
type progress struct {
	cfg                 Config
	runsLeft, warmsLeft int
	total, done         int
	overhead            time.Duration // running mean of per-run time beyond the wrk duration
	nOverhead           int
}

func newProgress(cfg Config, servers []Server) *progress {
	p := &progress{cfg: cfg, overhead: 300 * time.Millisecond}
	for _, w := range cfg.Workloads {
		n := 0
		for _, s := range servers {
			if s.Supports(w) {
				n++
			}
		}
		p.runsLeft += n * cfg.Rounds
		if cfg.Warmup > 0 {
			p.warmsLeft += n
		}
	}
	p.total = p.runsLeft + p.warmsLeft
	return p
}

func (p *progress) remaining() time.Duration {
	return time.Duration(p.runsLeft)*(p.cfg.Duration+p.overhead) + time.Duration(p.warmsLeft)*(p.cfg.Warmup+p.overhead)
}

func (p *progress) note(d, nominal time.Duration) {
	p.done++
	p.nOverhead++
	p.overhead += (d - nominal - p.overhead) / time.Duration(p.nOverhead)
}

func (p *progress) doneRun(d time.Duration)    { p.runsLeft--; p.note(d, p.cfg.Duration) }
func (p *progress) doneWarmup(d time.Duration) { p.warmsLeft--; p.note(d, p.cfg.Warmup) }

func (p *progress) show(round int, workload, server, what string) {
	step := fmt.Sprintf("round %d/%d", round, p.cfg.Rounds)
	if what != "" {
		step = what
	}
	line := fmt.Sprintf("[%d/%d] %s · %s · %s · ETA %s", p.done+1, p.total, step, workload, server,
		p.remaining().Round(time.Second))
	if p.cfg.ProgressTTY {
		fmt.Fprintf(p.cfg.Progress, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.cfg.Progress, line)
	}
}

func (p *progress) clear() {
	if p.cfg.ProgressTTY {
		fmt.Fprint(p.cfg.Progress, "\r\033[K")
	}
}
