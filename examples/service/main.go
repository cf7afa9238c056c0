// Command service is a small JSON API written twice: once on riptide's
// native door (native.go: router, groups, riptide's middleware, the
// compress module) and once on the compat door (compat.go: an
// http.ServeMux and net/http middleware served through riptide.FromHTTP,
// or by net/http itself), for comparison. notes.go is what they share.
//
//	cd examples/service
//	go run . -addr 127.0.0.1:8080                 # native door, event loop
//	go run . -door compat -engine goroutine       # compat door
//	go run . -door nethttp                        # the compat handler on net/http
//
// The page and its assets (public/) are built into the binary, so a built
// service runs from any directory (go build -o /usr/local/bin/service .);
// -static serves another directory instead.
//
// Routes (the same on every door):
//
//	GET    /api/notes        the notes (JSON)
//	GET    /api/notes/{id}   one note; 404 JSON if none
//	POST   /api/notes        {"title": "...", "body": "..."} → 201 + Location;
//	                         400 (bad JSON, no title), 413 (over 16 KiB), 415 (not JSON)
//	GET    /api/events       server-sent events: "hello", then "note" for each new note
//	GET    /admin            {"user": "..."}; Basic auth (-admin user:password)
//	DELETE /admin/notes/{id} 204; Basic auth
//	GET    /metrics          Prometheus text: riptide_* and notes_created_total
//	GET    /, /assets/...    the page and its assets: public/, built into the
//	                         binary, or the directory -static names
//
// Every error is {"error": "...", "status": N}. Every response carries
// X-Request-Id and is logged; /api answers CORS preflights from -origins;
// responses are compressed when the client accepts it. SIGINT or SIGTERM
// shut the server down gracefully: event streams end at once, other
// requests may finish within -grace.
//
//	curl -i localhost:8080/api/notes
//	curl -i -H 'Content-Type: application/json' -d '{"title":"milk"}' localhost:8080/api/notes
//	curl -N localhost:8080/api/events
//	curl -i -u admin:secret -X DELETE localhost:8080/admin/notes/1
//	curl -s --compressed localhost:8080/metrics | grep notes_
package main

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
)

// config is what the flags set.
type config struct {
	door    string // native, compat or nethttp
	engine  riptide.Engine
	static  string            // directory served at /
	users   map[string]string // Basic auth for /admin
	origins []string          // CORS origins allowed on /api
}

// service is the server of one door, started by serve and stopped by
// shutdown (graceful) whatever the door.
type service struct {
	serve    func(net.Listener) error
	shutdown func(context.Context) error
	// engine names what serves ln: riptide's engine as Serve resolves
	// it (Server.EngineFor), or "net/http".
	engine func(ln net.Listener) string
}

// public is the page and its assets, built into the binary so that it
// runs from any directory.
//
//go:embed public
var public embed.FS

// staticDir returns the directory served at /: dir, or when dir is empty
// a temporary copy of the built-in public/ (static.New serves a
// directory), which cleanup removes.
func staticDir(dir string) (_ string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "riptide-service-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if err := os.CopyFS(tmp, public); err != nil {
		cleanup()
		return "", nil, err
	}
	return filepath.Join(tmp, "public"), cleanup, nil
}

// riptideEngine is service.engine for a riptide door.
func riptideEngine(srv *riptide.Server) func(net.Listener) string {
	return func(ln net.Listener) string { return srv.EngineFor(ln).String() }
}

// newService builds the service for cfg.door.
func newService(cfg config, log *slog.Logger) (*service, error) {
	st := newStore()
	switch cfg.door {
	case "native":
		srv, err := nativeServer(cfg, st, log)
		if err != nil {
			return nil, err
		}
		return &service{serve: srv.Serve, shutdown: srv.Shutdown, engine: riptideEngine(srv)}, nil
	case "compat":
		srv := &riptide.Server{Engine: cfg.engine, Logger: log}
		quit := make(chan struct{})
		srv.RegisterOnShutdown(func() { close(quit) })
		riptideMetrics := func(dst []byte) []byte {
			var s riptide.Stats
			srv.Stats(&s)
			return riptide.AppendMetrics(dst, &s)
		}
		srv.Handler = riptide.FromHTTP(compatHandler(cfg, st, log, quit, riptideMetrics))
		return &service{serve: srv.Serve, shutdown: srv.Shutdown, engine: riptideEngine(srv)}, nil
	case "nethttp":
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		quit := make(chan struct{})
		srv.RegisterOnShutdown(func() { close(quit) })
		noMetrics := func(dst []byte) []byte { return dst }
		srv.Handler = compatHandler(cfg, st, log, quit, noMetrics)
		return &service{serve: srv.Serve, shutdown: srv.Shutdown, engine: func(net.Listener) string { return "net/http" }}, nil
	}
	return nil, fmt.Errorf("unknown -door %q: want native, compat or nethttp", cfg.door)
}

// parseEngine maps the -engine flag to a riptide.Engine.
func parseEngine(s string) (riptide.Engine, error) {
	for e := riptide.EngineAuto; e <= riptide.EngineOnLoop; e++ {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown -engine %q: want auto, eventloop, goroutine or onloop", s)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	door := flag.String("door", "native", "native (riptide's Ctx API), compat (net/http handlers on riptide) or nethttp (the same on net/http)")
	engine := flag.String("engine", cmp.Or(os.Getenv("RIPTIDE_ENGINE"), "auto"), "riptide engine: auto (the event loop on Linux), eventloop, goroutine or onloop (default $RIPTIDE_ENGINE)")
	dir := flag.String("static", "", "directory served at / (default: public/, built into the binary)")
	admin := flag.String("admin", "admin:secret", "user:password allowed on /admin")
	origins := flag.String("origins", "http://localhost:3000", "comma-separated origins allowed to call /api from a browser (CORS)")
	grace := flag.Duration("grace", 10*time.Second, "how long in-flight requests may take to finish at shutdown")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	user, pass, ok := strings.Cut(*admin, ":")
	e, err := parseEngine(*engine)
	if err == nil && !ok {
		err = errors.New("-admin wants user:password")
	}
	if err != nil {
		log.Error("flags", "err", err)
		os.Exit(2)
	}
	static, cleanup, err := staticDir(*dir)
	if err != nil {
		log.Error("static", "err", err)
		os.Exit(1)
	}
	defer cleanup()
	svc, err := newService(config{
		door:    *door,
		engine:  e,
		static:  static,
		users:   map[string]string{user: pass},
		origins: strings.Split(*origins, ","),
	}, log)
	if err != nil {
		log.Error("setup", "err", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The engine Serve runs ("auto" resolved), not the flag.
	log.Info("listening", "url", "http://"+ln.Addr().String(), "door", *door, "engine", svc.engine(ln))

	served := make(chan error, 1)
	go func() { served <- svc.serve(ln) }()
	select {
	case err := <-served: // did not even start
		log.Error("serve", "err", err)
		os.Exit(1)
	case <-sig.Done():
	}
	stop() // a second signal kills the process
	log.Info("shutting down", "grace", *grace)
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := svc.shutdown(ctx); err != nil {
		log.Error("shutdown", "err", err)
	}
	// riptide.ErrServerClosed is http.ErrServerClosed: a clean stop.
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	log.Info("stopped")
}
