// Command riptide-bench runs the cross-library HTTP load benchmark: riptide
// (native and compat), net/http, chi, fasthttp, a C ceiling and, when
// installed, nginx, driven by wrk on 127.0.0.1 in interleaved rounds; the
// extra HTTP/2 workloads (h2c, h2tls) are driven by h2load.
//
// From the repository root:
//
//	go -C bench run ./cmd/riptide-bench            # full run, ≈30 minutes
//	go -C bench run ./cmd/riptide-bench -quick     # 2 rounds × 2 s smoke run
//	go -C bench run ./cmd/riptide-bench -servers riptide,fasthttp,nethttp -workloads plaintext,json
//	go -C bench run ./cmd/riptide-bench -workloads h2c,h2tls   # HTTP/2 (h2load)
//
// Results go to bench/results/<date>/ (results.md, results.json, PNG charts,
// raw wrk output). See bench/README.md for the protocol and caveats.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/bench/internal/harness"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		servers     = flag.String("servers", "", "comma-separated servers (default: all; see -list)")
		workloads   = flag.String("workloads", "", "comma-separated workloads (default: all but the extra ones (h2c, h2tls, tls, routed, static and idle ones), which run only when named; see -list)")
		rounds      = flag.Int("rounds", 6, "rounds per workload; each round runs every server once, order rotated")
		duration    = flag.Duration("duration", 5*time.Second, "length of each measured wrk/h2load run (whole seconds: wrk's unit)")
		warmup      = flag.Duration("warmup", time.Second, "unmeasured wrk run per server before each workload's rounds, whole seconds (0 disables)")
		connections = flag.Int("connections", 0, "wrk/h2load connections for workloads that do not fix their own (c1000 uses 1000); 0: 50, or -conns-per-thread × the -wrk-cpus CPUs when that is more; for the idle workloads (idle, idletls, h2idle, h2idletls, h3idle), the idle connections opened (0: each workload's own count)")
		perThread   = flag.Int("conns-per-thread", harness.DefaultConnsPerThread, "connections per load thread when -wrk-cpus is given and -connections is not")
		serverCPUs  = flag.String("server-cpus", "", "pin servers with taskset -c LIST (e.g. 0, 0-3), or auto:N (N CPUs as whole physical cores, lowest first); GOMAXPROCS and server worker threads = its size; empty: no pinning")
		wrkCPUs     = flag.String("wrk-cpus", "", "pin wrk (and h2load) and the harness with taskset -c LIST (e.g. 1, 4-15), or rest (every core the servers do not use); their threads = its size; empty: no pinning, one thread")
		prebuilt    = flag.String("prebuilt", "", "directory of prebuilt server binaries (a packed multi-core kit, bench/mc): build nothing; its buildinfo.json, if any, is recorded")
		quick       = flag.Bool("quick", false, "smoke run: 2 rounds × 2 s, no warm-up (explicit -rounds/-duration/-warmup win)")
		out         = flag.String("out", "", "results directory (default: bench/results/<date>[-quick])")
		wsConns     = flag.Int("ws-conns", 0, "connections of the WebSocket workloads (wsidle 10000, wsecho 100, wsechoc1000 1000, wsbroadcast 1000 subscribers); 0: each workload's own")
		wsGoroutine = flag.Bool("ws-goroutines", false, "WebSocket workloads: a goroutine per connection (the portable client) instead of the epoll client (Linux)")
		wsSpin      = flag.Duration("ws-spin", harness.WSClientSpin, "WebSocket workloads: how long the epoll client polls before it sleeps (0: never spins; a sleeping client is woken by each answer, at the server's cost)")
		list        = flag.Bool("list", false, "list servers and workloads, then exit")
	)
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if *list {
		fmt.Println("servers:")
		for _, s := range harness.Registry() {
			fmt.Printf("  %-15s %s\n", s.Name, s.Desc)
		}
		fmt.Println("workloads:")
		for _, w := range harness.Workloads() {
			extra := ""
			if w.Extra {
				extra = " [" + w.Tool() + "; not in the default set]"
			}
			fmt.Printf("  %-15s %s%s\n", w.Name, w.Desc, extra)
		}
		return 0
	}
	if *quick {
		if !set["rounds"] {
			*rounds = 2
		}
		if !set["duration"] {
			*duration = 2 * time.Second
		}
		if !set["warmup"] {
			*warmup = 0
		}
	}
	wd, _ := os.Getwd()
	root, err := harness.FindRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "riptide-bench:", err)
		return 2
	}
	ss, err := harness.SelectServers(*servers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "riptide-bench: -servers:", err)
		return 2
	}
	ws, err := harness.SelectWorkloads(*workloads)
	if err != nil {
		fmt.Fprintln(os.Stderr, "riptide-bench: -workloads:", err)
		return 2
	}
	if *servers == "" {
		ss = harness.DefaultServersFor(ss, ws)
	}
	dir := *out
	if dir == "" {
		name := time.Now().UTC().Format("2006-01-02T150405Z")
		if *quick {
			name += "-quick"
		}
		dir = filepath.Join(root, "results", name)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer harness.Cleanup()

	tty := false
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		tty = true
	}
	// Everything printed also goes to run.log in the results directory.
	var logw io.Writer = os.Stderr
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "riptide-bench:", err)
		return 1
	}
	if f, err := os.Create(filepath.Join(dir, "run.log")); err == nil {
		defer f.Close()
		logw = io.MultiWriter(os.Stderr, f)
	}
	harness.WSClientSpin = *wsSpin
	cfg := harness.Config{
		Root: root, Servers: ss, Workloads: ws,
		Rounds: *rounds, Duration: *duration, Warmup: *warmup, Connections: *connections, WSConns: *wsConns, WSGoroutines: *wsGoroutine, WSSpin: *wsSpin,
		ConnsPerThread: *perThread, ServerCPUs: *serverCPUs, WrkCPUs: *wrkCPUs, OutDir: dir,
		Command:  "go -C bench run ./cmd/riptide-bench " + strings.Join(os.Args[1:], " "),
		Progress: logw, ProgressTTY: tty, Log: logw,
	}
	if tty { // the redrawn progress line stays on the terminal, out of run.log
		cfg.Progress = os.Stderr
	}
	if *prebuilt != "" {
		cfg.Prebuilt, err = filepath.Abs(*prebuilt)
		if err != nil {
			fmt.Fprintln(os.Stderr, "riptide-bench: -prebuilt:", err)
			return 2
		}
		cfg.Command = "riptide-bench " + strings.Join(os.Args[1:], " ")
		if b, err := os.ReadFile(filepath.Join(cfg.Prebuilt, "buildinfo.json")); err == nil {
			cfg.Build = new(harness.BuildInfo)
			if err := json.Unmarshal(b, cfg.Build); err != nil {
				fmt.Fprintln(os.Stderr, "riptide-bench: -prebuilt: buildinfo.json:", err)
				return 2
			}
		}
	}
	res, err := harness.Run(ctx, cfg)
	if res != nil && len(res.Runs) > 0 {
		if werr := harness.WriteReport(res, dir); werr != nil {
			fmt.Fprintln(os.Stderr, "riptide-bench: writing report:", werr)
			return 1
		}
		fmt.Fprintf(logw, "results: %s\n", filepath.Join(dir, "results.md"))
	}
	if err != nil {
		fmt.Fprintln(logw, "riptide-bench:", err)
		return 1
	}
	return 0
}
