// Command restart is a riptide server that restarts without dropping a
// connection: on SIGHUP it starts the binary again (a new build, if the
// file was replaced), hands it the listening socket, and once the new
// process is serving stops accepting, drains its connections and exits.
// SIGINT and SIGTERM shut it down as usual.
//
//	go build -o /tmp/restart ./examples/restart && /tmp/restart -addr 127.0.0.1:8080 &
//	curl http://127.0.0.1:8080/      # "hello from pid 1234"
//	kill -HUP %1                     # a new pid answers; no request fails
//
// Under systemd socket activation the same program serves the sockets
// systemd passes (listen.Handoff picks them up).
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/listen"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	drain := flag.Duration("drain", 30*time.Second, "how long in-flight requests may take to finish")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("pid", os.Getpid())

	h, err := listen.NewHandoff()
	if err != nil {
		log.Error("handoff", "err", err)
		os.Exit(1)
	}
	ln, err := h.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	pid := "hello from pid " + strconv.Itoa(os.Getpid()) + "\n"
	srv := &riptide.Server{Logger: log, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		x.WriteString(pid)
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := h.Ready(); err != nil {
		log.Error("telling the old process", "err", err)
	}
	log.Info("serving", "addr", ln.Addr().String(), "inherited", h.Inherited())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	for s := range sig {
		if s == syscall.SIGHUP {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			proc, err := h.Restart(ctx)
			cancel()
			if err != nil {
				log.Error("restart failed; still serving", "err", err)
				continue
			}
			log.Info("handed over", "new_pid", proc.Pid)
		}
		break
	}
	ctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("shutdown", "err", err)
	}
	if err := <-served; !errors.Is(err, riptide.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	log.Info("drained, exiting")
}
