// Package serve is the command-line contract and lifecycle shared by the
// event-store servers under bench/eventstore/servers: flags, store choice,
// access log, CPU profile, and the "listening on" line and signal handling
// of bench/internal/benchserver.
package serve

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/riptide-http/riptide/bench/eventstore"
	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Options are the parsed flags.
type Options struct {
	Addr string
	// Store is "sqlite" or "memory".
	Store string
	// DB is the SQLite file; empty means a fresh file in a temporary
	// directory, removed at exit.
	DB string
	// LogFile receives the JSON access log; empty means io.Discard.
	LogFile string
	// CPUProfile, when set, receives a CPU profile of the whole run.
	CPUProfile string
}

// ParseFlags parses the command line; it exits with status 2 on misuse.
func ParseFlags() Options {
	var o Options
	flag.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free port)")
	flag.StringVar(&o.Store, "store", "sqlite", "event store: sqlite or memory")
	flag.StringVar(&o.DB, "db", "", "SQLite database file (default: a fresh file in a temporary directory)")
	flag.StringVar(&o.LogFile, "log", "", "access log file, slog JSON (default: discarded)")
	flag.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if o.Store != "sqlite" && o.Store != "memory" {
		fmt.Fprintf(os.Stderr, "unknown -store %q (want sqlite or memory)\n", o.Store)
		os.Exit(2)
	}
	return o
}

// Env is an opened application with its logger.
type Env struct {
	App *eventstore.App
	Log *slog.Logger
	// closers run at exit, last first.
	closers []func()
}

// Open creates the store, the App (with eventstore.DemoTokens) and the
// logger named by o.
func Open(o Options) (*Env, error) {
	e := &Env{}
	var out io.Writer = io.Discard
	if o.LogFile != "" {
		f, err := os.Create(o.LogFile)
		if err != nil {
			return nil, err
		}
		e.closers = append(e.closers, func() { f.Close() })
		out = f
	}
	e.Log = slog.New(slog.NewJSONHandler(out, nil))
	var store eventstore.Store = eventstore.NewMemoryStore()
	if o.Store == "sqlite" {
		path := o.DB
		if path == "" {
			dir, err := os.MkdirTemp("", "eventstore-")
			if err != nil {
				return nil, err
			}
			e.closers = append(e.closers, func() { os.RemoveAll(dir) })
			path = filepath.Join(dir, "events.db")
		}
		s, err := eventstore.OpenSQLite(path)
		if err != nil {
			e.Close()
			return nil, err
		}
		store = s
	}
	e.closers = append(e.closers, func() { store.Close() })
	e.App = eventstore.NewApp(store, eventstore.DemoTokens)
	return e, nil
}

// Close releases the store and the log file.
func (e *Env) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

// Main opens the application, lets build make the server from it, and
// serves until SIGINT or SIGTERM: then it ends the CPU profile, closes the
// live subscriptions (so SSE handlers return) and calls the server's stop.
func Main(build func(e *Env) (serve func(net.Listener) error, stop func())) {
	o := ParseFlags()
	e, err := Open(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(1)
	}
	defer e.Close()
	endProfile := func() {}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpuprofile:", err)
			os.Exit(1)
		}
		endProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	serve, stop := build(e)
	benchserver.Main(benchserver.Options{Addr: o.Addr}, serve, func() {
		endProfile()
		e.App.Broker.Close()
		stop()
	})
}
