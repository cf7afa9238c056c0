package main

// Running the example in a fleet: behind a layer 4 balancer with the PROXY
// protocol (-proxy-from), restarted without dropping a connection
// (SIGHUP, package listen), drained for the balancer (SIGUSR1, GET /ready)
// and watched (-metrics, GET /metrics).
//
//	go run ./examples/hello -proxy-from 127.0.0.1/32 -metrics
//	printf 'PROXY TCP4 203.0.113.7 127.0.0.1 4242 8080\r\nGET /whoami HTTP/1.1\r\nHost: x\r\n\r\n' | nc 127.0.0.1 8080

import (
	"context"
	"flag"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/listen"
)

var (
	proxyFrom   = flag.String("proxy-from", "", "accept the PROXY protocol (v1, v2) from these comma-separated networks (CIDR) only")
	fwdFrom     = flag.String("forwarded-from", "", "take the client address from X-Forwarded-For of requests from these networks (CIDR)")
	metricsFlag = flag.Bool("metrics", false, "serve the server's statistics at GET /metrics (Prometheus text)")
	drainFlag   = flag.Duration("drain", 10*time.Second, "how long in-flight requests may take to finish at shutdown")
)

// fleetListen applies -proxy-from and -metrics to srv and returns the
// listener for addr: handed over by the process this one replaces, or new.
func fleetListen(srv *riptide.Server, addr string, log *slog.Logger) (net.Listener, *listen.Handoff, error) {
	if *proxyFrom != "" {
		nets, err := parseNets(*proxyFrom)
		if err != nil {
			return nil, nil, err
		}
		srv.ProxyProtocol = &riptide.ProxyConfig{TrustedNetworks: nets}
		log.Info("PROXY protocol on", "trusted", *proxyFrom)
	}
	if *fwdFrom != "" {
		nets, err := parseNets(*fwdFrom)
		if err != nil {
			return nil, nil, err
		}
		srv.Forwarded = &riptide.ForwardedConfig{TrustedNetworks: nets}
		log.Info("forwarding headers trusted", "from", *fwdFrom)
	}
	srv.Handler = fleetRoutes(srv, srv.Handler)
	h, err := listen.NewHandoff()
	if err != nil {
		return nil, nil, err
	}
	ln, err := h.Listen("tcp", addr)
	return ln, h, err
}

// fleetRoutes answers GET /ready and, with -metrics, GET /metrics in front
// of the mode's router.
func fleetRoutes(srv *riptide.Server, next riptide.Handler) riptide.Handler {
	ready, metrics := srv.ReadyHandler(), srv.MetricsHandler()
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		switch string(c.Path()) {
		case "/ready":
			ready.ServeCtx(c)
		case "/metrics":
			if *metricsFlag {
				metrics.ServeCtx(c)
				return
			}
			next.ServeCtx(c)
		default:
			next.ServeCtx(c)
		}
	})
}

// notifySignals starts catching the signals handleSignals serves; main
// calls it before it logs "listening", so that a signal sent as soon as
// that line appears is not fatal.
func notifySignals() <-chan os.Signal {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	if drainSignal != nil {
		signal.Notify(sig, drainSignal)
	}
	return sig
}

// handleSignals serves the signals of sig (notifySignals) until the server
// is shut down: SIGHUP restarts (hand over, then drain and stop), SIGUSR1
// drains (Unix only: signal_unix.go), SIGINT and SIGTERM shut down.
func handleSignals(sig <-chan os.Signal, srv *riptide.Server, h *listen.Handoff, log *slog.Logger) {
	for s := range sig {
		switch s {
		case drainSignal:
			log.Info("draining")
			srv.Drain()
			continue
		case syscall.SIGHUP:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			proc, err := h.Restart(ctx)
			cancel()
			if err != nil {
				log.Error("restart failed; still serving", "err", err)
				continue
			}
			log.Info("handed over", "new_pid", proc.Pid)
		}
		log.Info("shutting down", "signal", s.String())
		ctx, cancel := context.WithTimeout(context.Background(), *drainFlag)
		if err := srv.Shutdown(ctx); err != nil {
			log.Error("shutdown", "err", err)
		}
		cancel()
		return
	}
}

// parseNets parses comma-separated CIDR prefixes.
func parseNets(list string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		nets = append(nets, p)
	}
	return nets, nil
}

// appendAddr appends a network address without allocating for TCP.
func appendAddr(b []byte, a net.Addr) []byte {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).AppendTo(b)
	}
	return append(b, a.String()...)
}
