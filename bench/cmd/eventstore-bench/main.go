// Command eventstore-bench runs the event-store application benchmark: one
// application (bench/eventstore) served five ways — net/http, riptide's
// compat door, fasthttp's adaptor, and native ports on fasthttp and
// riptide — under a mixed RPC load with SSE subscribers, for the SQLite
// store and the in-memory store.
//
//	go -C bench run ./cmd/eventstore-bench            # default run: 6 rounds × 10 s per server and store
//	go -C bench run ./cmd/eventstore-bench -quick     # smoke run: 2 rounds × 3 s, no warm-up
//	go -C bench run ./cmd/eventstore-bench -profile   # also CPU and allocation profiles of every server, split
//
// Results go to bench/results/eventstore-<date>/ (results.md, results.json,
// PNG charts, server logs, profiles). Ctrl-C stops the run and still writes
// the partial results.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore/esbench"
	"github.com/riptide-http/riptide/bench/eventstore/load"
	"github.com/riptide-http/riptide/bench/internal/harness"
)

func main() { os.Exit(run()) }

func run() int {
	var (
		servers     = flag.String("servers", strings.Join(esbench.Names(), ","), "servers, comma-separated")
		stores      = flag.String("stores", "sqlite,memory", "store variants, comma-separated")
		rounds      = flag.Int("rounds", 6, "rounds per store; each runs every server once, order rotated")
		duration    = flag.Duration("duration", 10*time.Second, "length of each measured run")
		warmup      = flag.Duration("warmup", 2*time.Second, "unmeasured run per server and store before the rounds")
		conns       = flag.Int("connections", 32, "keep-alive connections (one worker each)")
		subscribers = flag.Int("subscribers", 8, "SSE subscribers, one category each")
		streams     = flag.Int("streams", 1000, "streams")
		seed        = flag.Int("seed-events", 5, "events appended to every stream before the runs")
		reads       = flag.Int("reads", load.DefaultMix.Reads, "percent stream reads")
		appends     = flag.Int("appends", load.DefaultMix.Appends, "percent appends (the rest are category reads)")
		serverCPUs  = flag.String("server-cpus", "", "pin the servers with taskset -c LIST")
		profile     = flag.Bool("profile", false, "CPU- and allocation-profile every server and split HTTP layer vs application")
		quick       = flag.Bool("quick", false, "smoke run: 2 rounds × 3 s, no warm-up (explicit flags win)")
		out         = flag.String("out", "", "results directory (default: bench/results/eventstore-<date>[-quick])")
		report      = flag.String("report", "", "only rewrite results.md and the charts of this results directory from its results.json")
	)
	flag.Parse()
	if *report != "" {
		if err := esbench.Rereport(*report); err != nil {
			fmt.Fprintln(os.Stderr, "eventstore-bench:", err)
			return 1
		}
		return 0
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["rounds"] {
			*rounds = 2
		}
		if !set["duration"] {
			*duration = 3 * time.Second
		}
		if !set["warmup"] {
			*warmup = 0
		}
	}
	if *reads < 0 || *appends < 0 || *reads+*appends > 100 || *rounds < 1 || *duration <= 0 || *conns < 1 {
		fmt.Fprintln(os.Stderr, "eventstore-bench: bad -reads/-appends/-rounds/-duration/-connections")
		return 2
	}
	for _, s := range strings.Split(*servers, ",") {
		if !contains(esbench.Names(), s) {
			fmt.Fprintf(os.Stderr, "eventstore-bench: unknown server %q (have %s)\n", s, strings.Join(esbench.Names(), ", "))
			return 2
		}
	}
	for _, s := range strings.Split(*stores, ",") {
		if s != "sqlite" && s != "memory" {
			fmt.Fprintf(os.Stderr, "eventstore-bench: unknown store %q (have sqlite, memory)\n", s)
			return 2
		}
	}
	wd, _ := os.Getwd()
	root, err := harness.FindRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventstore-bench:", err)
		return 2
	}
	dir := *out
	if dir == "" {
		name := "eventstore-" + time.Now().UTC().Format("2006-01-02T150405Z")
		if *quick {
			name += "-quick"
		}
		dir = filepath.Join(root, "results", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "eventstore-bench:", err)
		return 1
	}
	// The raw output is kept with the results.
	logf, err := os.Create(filepath.Join(dir, "run.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventstore-bench:", err)
		return 1
	}
	defer logf.Close()
	log := io.MultiWriter(os.Stderr, logf)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer harness.Cleanup()
	cfg := esbench.Config{
		Root: root, Servers: strings.Split(*servers, ","), Stores: strings.Split(*stores, ","),
		Rounds: *rounds, Duration: *duration, Warmup: *warmup, Conns: *conns, Subscribers: *subscribers,
		Streams: *streams, SeedEvents: *seed, Mix: load.Mix{Reads: *reads, Appends: *appends},
		ServerCPUs: *serverCPUs, Profile: *profile, OutDir: dir,
		Command: strings.TrimSpace("go -C bench run ./cmd/eventstore-bench " + strings.Join(os.Args[1:], " ")),
		Log:     log,
	}
	res, err := esbench.Run(ctx, cfg)
	if res != nil && len(res.Runs) > 0 {
		if werr := esbench.WriteReport(res, dir); werr != nil {
			fmt.Fprintln(log, "eventstore-bench: writing report:", werr)
			return 1
		}
		fmt.Fprintf(log, "results: %s\n", filepath.Join(dir, "results.md"))
	}
	if err != nil {
		fmt.Fprintln(log, "eventstore-bench:", err)
		return 1
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
