// Command hello is riptide's example server.
//
//	go run ./examples/hello -addr 127.0.0.1:8080
//
// Routes (native mode, the default, routed by package router):
//
//	GET /          200 "Hello, World!" (text/plain)
//	HEAD|OPTIONS / 200
//	POST /         echoes the request body
//	GET /json      {"message":"Hello, World!"}, encoded per request
//	POST /echo     the request headers as "Name: Value" lines (GET too)
//	GET /cookie    the request cookies as "name=value" lines
//	GET /stream    5 server-sent events, 100 ms apart
//	GET /whoami    the client's address as the server sees it (text)
//	GET /ready     200 "ready", 503 "draining" once draining starts
//	GET /metrics   the server's statistics (Prometheus text), with -metrics
//
// Running in a fleet (fleet.go): -proxy-from CIDR accepts the PROXY
// protocol (v1 and v2) from that network only; SIGHUP restarts the binary
// without dropping a connection, SIGUSR1 starts draining (the readiness
// route turns 503), SIGINT and SIGTERM shut down gracefully.
//
// -mode compat serves the same routes through an http.ServeMux on the same
// engine. -engine picks the engine (riptide.Engine): auto (the default:
// the event loop on Linux, goroutines elsewhere), eventloop, goroutine or
// onloop.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/router"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	mode := flag.String("mode", "native", "handler API: native or compat")
	engineName := flag.String("engine", "auto", "connection engine: auto, eventloop, goroutine or onloop")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("pid", os.Getpid())

	engine, err := parseEngine(*engineName)
	if err != nil {
		log.Error("bad -engine", "err", err)
		os.Exit(2)
	}
	srv := &riptide.Server{Logger: log, Engine: engine}
	switch *mode {
	case "native":
		srv.Handler = newRouter()
	case "compat":
		h, err := compatHandler()
		if err != nil {
			log.Error("compat mode", "err", err)
			os.Exit(2)
		}
		srv.Handler = h
	default:
		log.Error("unknown -mode; want native or compat", "mode", *mode)
		os.Exit(2)
	}

	ln, handoff, err := fleetListen(srv, *addr, log) // -proxy-from, -metrics (fleet.go)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	ln = h2Listener(srv, ln, log) // -h2c, -tls (h2.go)
	sig := notifySignals()
	// The engine Serve runs, not the flag: "auto" resolved, TLS on goroutines.
	log.Info("listening", "addr", listenURL(ln.Addr(), *tlsFlag), "mode", *mode, "engine", srv.EngineFor(ln))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	handoff.Ready() // a previous process, if any, stops accepting now
	handleSignals(sig, srv, handoff, log)
	if err := <-served; !errors.Is(err, riptide.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	log.Info("stopped")
}

// parseEngine returns the riptide.Engine whose String is name.
func parseEngine(name string) (riptide.Engine, error) {
	for e := riptide.EngineAuto; e <= riptide.EngineOnLoop; e++ {
		if e.String() == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown engine %q; want auto, eventloop, goroutine or onloop", name)
}

// listenURL is the base URL clients use for addr: https with -tls.
func listenURL(addr net.Addr, tls bool) string {
	if tls {
		return "https://" + addr.String()
	}
	return "http://" + addr.String()
}

// compatHandler is filled in by the net/http compat layer.
var compatHandler = func() (riptide.Handler, error) {
	return nil, errors.New("compat mode is not yet available")
}

// newRouter returns the native routes. Routing, path values and the
// 404/405/OPTIONS answers cost no allocation.
func newRouter() riptide.Handler {
	r := router.New()
	r.HandleFunc("GET /{$}", hello) // HEAD too: the router serves it with GET
	r.HandleFunc("OPTIONS /{$}", func(c *riptide.Ctx) {
		c.SetHeader("Allow", "GET, HEAD, OPTIONS, POST")
		c.SetHeader("Content-Type", "text/plain")
	})
	r.HandleFunc("POST /{$}", echoBody)
	r.HandleFunc("GET /json", jsonHello)
	// POST per the route list; GET too, for clients probing with it.
	r.HandleFunc("POST /echo", echoHeaders)
	r.HandleFunc("GET /echo", echoHeaders)
	r.HandleFunc("/cookie", cookies)
	r.HandleFunc("/stream", sse)
	r.HandleFunc("GET /whoami", func(c *riptide.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		var buf [64]byte
		c.Write(append(appendAddr(buf[:0], c.RemoteAddr()), '\n'))
	})
	r.NotFound = riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetStatus(404)
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("not found\n")
	})
	r.MethodNotAllowed = riptide.HandlerFunc(func(c *riptide.Ctx) { notAllowed(c, "") })
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		if c.Request().Form == h1.AuthorityForm { // CONNECT host:port: this is not a proxy
			notAllowed(c, "GET, HEAD, OPTIONS, POST")
			return
		}
		r.ServeCtx(c)
	})
}

func hello(c *riptide.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello, World!")
}

func jsonHello(c *riptide.Ctx) {
	c.SetHeader("Content-Type", "application/json")
	// Encoded per request into a stack buffer.
	var buf [64]byte
	b := append(buf[:0], `{"message":`...)
	b = appendJSONString(b, "Hello, World!")
	c.Write(append(b, '}'))
}

func echoHeaders(c *riptide.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	for _, h := range c.Request().Headers {
		c.Write(h.Name)
		c.WriteString(": ")
		c.Write(h.Value)
		c.WriteString("\n")
	}
}

func cookies(c *riptide.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	for name, value := range c.Cookies() {
		c.Write(name)
		c.WriteString("=")
		c.Write(value)
		c.WriteString("\n")
	}
}

// notAllowed answers 405; allow, when not empty, is the Allow header (the
// router has set it already otherwise).
func notAllowed(c *riptide.Ctx, allow string) {
	c.SetStatus(405)
	if allow != "" {
		c.SetHeader("Allow", allow)
	}
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("method not allowed\n")
}

// echoBody streams the request body back. With a Content-Length the reply
// is sent with the same length; a chunked request gets a chunked reply.
func echoBody(c *riptide.Ctx) {
	if ct := c.Header("Content-Type"); ct != nil {
		c.SetHeaderBytes("Content-Type", ct)
	}
	if n := c.ContentLength(); n >= 0 {
		c.SetContentLength(n)
	}
	var buf [16 << 10]byte
	if _, err := io.CopyBuffer(c, c.Body(), buf[:]); err != nil {
		c.SetStatus(400)
	}
}

// sse sends five server-sent events 100 ms apart, flushing each, and stops
// early if the client goes away.
func sse(c *riptide.Ctx) {
	c.SetHeader("Content-Type", "text/event-stream")
	c.SetHeader("Cache-Control", "no-cache")
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 1; i <= 5; i++ {
		var buf [32]byte
		b := strconv.AppendInt(append(buf[:0], "data: event "...), int64(i), 10)
		c.Write(append(b, '\n', '\n'))
		if c.Flush() != nil {
			return
		}
		if i == 5 {
			return
		}
		select {
		case <-t.C:
		case <-c.Done():
			return
		}
	}
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
