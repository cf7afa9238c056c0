// Command wsecho is riptide's WebSocket echo server: every message that
// arrives at / goes back as it came (text as text, binary as binary), with
// permessage-deflate offered. The Autobahn run (kosoku) drives it.
//
//	go run ./examples/wsecho -addr 127.0.0.1:9001 -mode native -engine eventloop
//
// -mode native upgrades riptide's native Ctx (websocket.Upgrade) and echoes
// on a goroutine per connection; -mode event serves the connection
// event-driven (websocket.Serve: parked on the event loop while idle);
// -mode compat serves an http.Handler on the same engine (websocket.Accept).
// -engine picks the engine (riptide.Engine): auto, eventloop, goroutine or
// onloop. -takeover keeps compression contexts between messages (the
// default here, so that the run covers it); -read-limit bounds a message.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
	"github.com/riptide-http/riptide/ws"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "listen address")
	mode := flag.String("mode", "native", "handler API: native, event or compat")
	engineName := flag.String("engine", "auto", "connection engine: auto, eventloop, goroutine or onloop")
	takeover := flag.Bool("takeover", true, "keep compression contexts between messages (when the client allows)")
	limit := flag.Int64("read-limit", 64<<20, "largest message in bytes")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	engine, err := parseEngine(*engineName)
	if err != nil {
		log.Error("bad -engine", "err", err)
		os.Exit(2)
	}
	opts := &websocket.Options{
		Compression: true,
		Deflate:     ws.DeflateConfig{ServerContextTakeover: *takeover, ClientContextTakeover: *takeover},
		ReadLimit:   *limit,
		CheckOrigin: func(string, string) bool { return true },
	}
	h, err := handler(*mode, opts)
	if err != nil {
		log.Error("bad -mode", "err", err)
		os.Exit(2)
	}
	srv := &riptide.Server{Logger: log, Engine: engine, Handler: h}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	log.Info("listening", "addr", "ws://"+ln.Addr().String()+"/", "mode", *mode, "engine", engine)
	if err := srv.Serve(ln); err != nil {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
}

// handler is the echo at / through the native door (websocket.Upgrade),
// its event-driven mode (websocket.Serve) or the compat door
// (websocket.Accept on riptide.FromHTTP).
func handler(mode string, opts *websocket.Options) (riptide.Handler, error) {
	switch mode {
	case "native":
		return riptide.HandlerFunc(func(x *riptide.Ctx) {
			c, err := websocket.Upgrade(x, opts)
			if err != nil {
				return
			}
			go echo(c) // the handler returns: the engine keeps nothing for it
		}), nil
	case "event":
		// Event-driven: an idle connection is parked on the event loop
		// with no goroutine and no buffer (a goroutine per connection on
		// the goroutine engine).
		echo := &websocket.Handler{
			OnMessage: func(p *websocket.Peer, mt websocket.MessageType, msg []byte) { p.WriteMessage(mt, msg) },
		}
		return riptide.HandlerFunc(func(x *riptide.Ctx) { websocket.Serve(x, opts, echo) }), nil
	case "compat":
		return riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, opts)
			if err != nil {
				return
			}
			go echo(c)
		})), nil
	}
	return nil, fmt.Errorf("unknown mode %q; want native, event or compat", mode)
}

// echo sends every message back whole once it has arrived whole (a peer
// that writes a long message before reading its echo would deadlock with a
// server that echoes frame by frame), until the connection ends.
func echo(c *websocket.Conn) {
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
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
