// Package esbench runs the event-store benchmark: the five servers of
// bench/eventstore/serve, each its own process, under the load of package
// load, in interleaved rounds with the order rotated, for each store
// variant; it writes results.json, results.md and charts like the harness.
package esbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore"
	"github.com/riptide-http/riptide/bench/eventstore/load"
	"github.com/riptide-http/riptide/bench/eventstore/serve"
	"github.com/riptide-http/riptide/bench/internal/harness"
)

// Baseline and Reference are the servers ratios are computed against.
const (
	Baseline  = "nethttp"
	Reference = "fasthttp-native"
)

// Config is one benchmark run's configuration.
type Config struct {
	Root        string        `json:"-"`
	Servers     []string      `json:"servers"`
	Stores      []string      `json:"stores"`
	Rounds      int           `json:"rounds"`
	Duration    time.Duration `json:"duration_ns"`
	Warmup      time.Duration `json:"warmup_ns"`
	Conns       int           `json:"connections"`
	Subscribers int           `json:"subscribers"`
	Streams     int           `json:"streams"`
	SeedEvents  int           `json:"seed_events_per_stream"`
	Mix         load.Mix      `json:"mix"`
	ServerCPUs  string        `json:"server_cpus"`
	// Profile takes CPU and allocation profiles of every server's
	// measured runs (from eventstore.ProfilePath and AllocsPath) and
	// splits them; every server pays the same profiling overhead.
	Profile bool      `json:"profile"`
	OutDir  string    `json:"-"`
	Command string    `json:"command"`
	Log     io.Writer `json:"-"`
}

// RunRecord is one measured run of one server.
type RunRecord struct {
	Store    string `json:"store"`
	Server   string `json:"server"`
	Round    int    `json:"round"`
	Position int    `json:"position"`
	load.Result
	OpsPerSec    float64 `json:"ops_per_sec"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUPerOpUS   float64 `json:"cpu_us_per_op"`
	BytesPerOp   float64 `json:"bytes_per_op"`
	ObjectsPerOp float64 `json:"objects_per_op"`
	Flagged      bool    `json:"flagged"`
	Flag         string  `json:"flag,omitempty"`
}

// Results is everything a run produced; it is written as results.json.
type Results struct {
	Meta        harness.SysInfo  `json:"meta"`
	Config      Config           `json:"config"`
	Runs        []RunRecord      `json:"runs"`
	PeakRSS     map[string]int64 `json:"peak_rss_bytes"` // key "store/server"
	Profiles    map[string]Split `json:"cpu_profile_split,omitempty"`
	Allocs      map[string]Split `json:"alloc_profile_split,omitempty"`
	Summary     []StoreSummary   `json:"summary"`
	Interrupted bool             `json:"interrupted,omitempty"`
	Elapsed     time.Duration    `json:"elapsed_ns"`
}

// Binaries are built into bin/eventstore, apart from the harness's servers
// of the same names.
func binDir(root string) string { return filepath.Join(root, "bin", "eventstore") }

func harnessServer(name string) harness.Server {
	return harness.Server{Name: name, Kind: harness.KindGo, Pkg: "./eventstore/servers/" + name}
}

// Run builds the servers and runs every store variant; it returns what it
// gathered, also when interrupted.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	start := time.Now()
	defer harness.Cleanup()
	res := &Results{Config: cfg, PeakRSS: map[string]int64{}, Profiles: map[string]Split{}, Allocs: map[string]Split{}}
	var hs []harness.Server
	for _, n := range cfg.Servers {
		hs = append(hs, harnessServer(n))
	}
	fmt.Fprintf(cfg.Log, "building %d servers into %s\n", len(hs), binDir(cfg.Root))
	if err := harness.Build(ctx, cfg.Root, binDir(cfg.Root), hs); err != nil {
		return nil, err
	}
	res.Meta = harness.CollectSysInfo(ctx, cfg.Root, "", "")
	for _, d := range []string{"logs", "profiles"} {
		if err := os.MkdirAll(filepath.Join(cfg.OutDir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, store := range cfg.Stores {
		err := runStore(ctx, cfg, res, store)
		res.Summary = Summarize(res)
		if err != nil {
			res.Interrupted = true
			res.Elapsed = time.Since(start)
			return res, err
		}
		printSummary(cfg.Log, res, store)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// server is one started server with the load's knowledge of its data.
type server struct {
	name  string
	proc  *harness.Proc
	state *load.State
	// profDir, when set, receives a CPU profile of every measured run,
	// and allocation profiles before and after it.
	profDir  string
	profiles []string
	allocs   []string
}

func runStore(ctx context.Context, cfg Config, res *Results, store string) error {
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.proc.Stop()
		}
	}()
	for _, name := range cfg.Servers {
		s, err := startServer(ctx, cfg, store, name)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	for _, s := range servers {
		fmt.Fprintf(cfg.Log, "%s/%s: seeding %d streams × %d events\n", store, s.name, cfg.Streams, cfg.SeedEvents)
		st, err := load.Seed(ctx, "http://"+s.proc.Addr, cfg.Streams, cfg.SeedEvents, 16)
		if err != nil {
			return fmt.Errorf("%s/%s: seeding: %w", store, s.name, err)
		}
		s.state = st
	}
	lc := func(s *server, d time.Duration) load.Config {
		return load.Config{Base: "http://" + s.proc.Addr, Conns: cfg.Conns, Subscribers: cfg.Subscribers, Duration: d, Mix: cfg.Mix}
	}
	if cfg.Warmup > 0 {
		for _, s := range servers {
			fmt.Fprintf(cfg.Log, "%s/%s: warm-up %s\n", store, s.name, cfg.Warmup)
			if _, err := load.Run(ctx, lc(s, cfg.Warmup), s.state); err != nil {
				return err
			}
		}
	}
	for slot := range harness.Rounds(cfg.Rounds, len(servers)) {
		s := servers[slot.Server]
		prof := ""
		if s.profDir != "" {
			prof = filepath.Join(s.profDir, fmt.Sprintf("%s-%s-r%d.pprof", store, s.name, slot.Round))
		}
		rec, err := measure(ctx, s, lc(s, cfg.Duration), prof)
		if err != nil {
			return err
		}
		rec.Store, rec.Round, rec.Position = store, slot.Round, slot.Position
		res.Runs = append(res.Runs, rec)
		fmt.Fprintf(cfg.Log, "%s r%d %-16s %9.0f ops/s  p50 %s p99 %s  SSE p99 %s  %.1f µs CPU/op  %.0f B/op %s\n",
			store, slot.Round, s.name, rec.OpsPerSec, harness.FormatMicros(rec.P50US, 1), harness.FormatMicros(rec.P99US, 1),
			harness.FormatMicros(rec.SSEP99US, int(rec.SSEEvents)), rec.CPUPerOpUS, rec.BytesPerOp, rec.Flag)
	}
	for _, s := range servers {
		if rss, err := s.proc.PeakRSS(); err == nil {
			res.PeakRSS[store+"/"+s.name] = rss
		}
		s.proc.Stop()
		splitProfiles(cfg, res, store, s)
	}
	return nil
}

// splitProfiles merges a server's per-run profiles and records the splits.
func splitProfiles(cfg Config, res *Results, store string, s *server) {
	for _, k := range []struct {
		kind, suffix, flags string
		paths               []string
		to                  map[string]Split
	}{
		{KindCPU, ".pprof", "-top", s.profiles, res.Profiles},
		{KindAllocs, "-allocs.pprof", "-sample_index=alloc_space -top", s.allocs, res.Allocs},
	} {
		if len(k.paths) == 0 {
			continue
		}
		merged := filepath.Join(cfg.OutDir, "profiles", store+"-"+s.name+k.suffix)
		sp, err := SplitProfiles(k.kind, k.paths, merged)
		if err != nil {
			fmt.Fprintf(cfg.Log, "%s/%s: %s profile: %v\n", store, s.name, k.kind, err)
			continue
		}
		rel, _ := filepath.Rel(cfg.OutDir, merged)
		sp.ProfileFile = rel
		sp.ProfileCommand = "go tool pprof " + k.flags + " " + rel
		k.to[store+"/"+s.name] = sp
	}
}

func startServer(ctx context.Context, cfg Config, store, name string) (*server, error) {
	logf, err := os.Create(filepath.Join(cfg.OutDir, "logs", store+"-"+name+".log"))
	if err != nil {
		return nil, err
	}
	// The file stays open for the server's life; the process exit closes it.
	s := &server{name: name}
	if cfg.Profile {
		s.profDir = filepath.Join(cfg.OutDir, "profiles", "runs")
		if err := os.MkdirAll(s.profDir, 0o755); err != nil {
			return nil, err
		}
	}
	p, err := harness.Start(ctx, harnessServer(name), harness.StartOptions{BinDir: binDir(cfg.Root), Args: []string{"-store", store},
		CPUs: cfg.ServerCPUs, Log: logf})
	if err != nil {
		return nil, err
	}
	s.proc = p
	return s, nil
}

// measure runs the load once against s and reads the server's CPU time
// (/proc) and allocation counters (its metrics route) around it.
func measure(ctx context.Context, s *server, lc load.Config, prof string) (RunRecord, error) {
	rec := RunRecord{Server: s.name}
	m0, err := metrics(ctx, lc.Base)
	if err != nil {
		return rec, err
	}
	var profErr chan error
	var allocs0 string
	if prof != "" {
		allocs0 = strings.TrimSuffix(prof, ".pprof") + "-allocs0.pprof"
		if fetch(ctx, lc.Base+eventstore.AllocsPath, allocs0) != nil {
			allocs0 = ""
		}
		profErr = make(chan error, 1)
		go func() { profErr <- fetchProfile(ctx, lc.Base, lc.Duration, prof) }()
	}
	cpu0, _ := s.proc.CPUSeconds()
	r, err := load.Run(ctx, lc, s.state)
	cpu1, _ := s.proc.CPUSeconds()
	if profErr != nil {
		if perr := <-profErr; perr == nil {
			s.profiles = append(s.profiles, prof)
		}
		allocs1 := strings.TrimSuffix(prof, ".pprof") + "-allocs1.pprof"
		if allocs0 != "" && fetch(ctx, lc.Base+eventstore.AllocsPath, allocs1) == nil {
			s.allocs = append(s.allocs, allocs0, allocs1)
		}
	}
	if ctx.Err() != nil {
		return rec, ctx.Err()
	}
	rec.Result = r
	m1, merr := metrics(ctx, lc.Base)
	rec.CPUSeconds = cpu1 - cpu0
	if r.Ops > 0 {
		rec.OpsPerSec = float64(r.Ops) / r.Elapsed.Seconds()
		rec.CPUPerOpUS = rec.CPUSeconds / float64(r.Ops) * 1e6
		rec.BytesPerOp = float64(m1.AllocBytes-m0.AllocBytes) / float64(r.Ops)
		rec.ObjectsPerOp = float64(m1.AllocObjects-m0.AllocObjects) / float64(r.Ops)
	}
	rec.Flag = flagOf(r, err, merr, s.proc)
	rec.Flagged = rec.Flag != ""
	return rec, nil
}

func flagOf(r load.Result, err, merr error, p *harness.Proc) string {
	switch {
	case err != nil:
		return err.Error()
	case p.Exited():
		return "server exited"
	case r.Ops == 0:
		return "no operations completed"
	case r.Errors > 0:
		return fmt.Sprintf("%d errors, first: %s", r.Errors, r.FirstError)
	case r.SSELost > 0:
		return fmt.Sprintf("%d acknowledged events never reached their subscriber", r.SSELost)
	case merr != nil:
		return "metrics: " + merr.Error()
	}
	return ""
}

// fetchProfile saves a CPU profile of the next d (whole seconds, at least
// one) from the server's profile endpoint.
func fetchProfile(ctx context.Context, base string, d time.Duration, path string) error {
	return fetch(ctx, fmt.Sprintf("%s%s?seconds=%d", base, eventstore.ProfilePath, max(int(d/time.Second), 1)), path)
}

// fetch saves the body of a GET of u to path.
func fetch(ctx context.Context, u, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	return errors.Join(err, f.Close())
}

func metrics(ctx context.Context, base string) (eventstore.Metrics, error) {
	var m eventstore.Metrics
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+eventstore.MetricsPath, nil)
	if err != nil {
		return m, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// Names are the servers, for -servers.
func Names() []string { return serve.Names }
