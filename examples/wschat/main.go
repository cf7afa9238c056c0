// Command wschat is a chat room in the browser: GET / serves a page whose
// script opens a WebSocket to /ws; every message a client sends goes to
// every client, encoded once (websocket.PreparedMessage).
//
//	go run ./examples/wschat -addr 127.0.0.1:8080   # then open http://127.0.0.1:8080/
//
// -engine picks the engine (riptide.Engine): auto, eventloop, goroutine or
// onloop. With -cert and -key it serves HTTPS (HTTP/2 and HTTP/1.1), and
// -ws-over-h2 then lets browsers open the WebSocket over HTTP/2 (RFC 8441,
// riptide.HTTP2Config.EnableConnectProtocol): every route of this server
// can answer an extended CONNECT (/ws serves it, the others answer 404
// or the page), as the switch requires.
//
//	go run ./examples/wschat -cert cert.pem -key key.pem -ws-over-h2   # https://127.0.0.1:8080/
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
)

//go:embed index.html
var page []byte

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	engineName := flag.String("engine", "auto", "connection engine: auto, eventloop, goroutine or onloop")
	certFile := flag.String("cert", "", "TLS certificate (PEM): serve HTTPS, HTTP/2 included")
	keyFile := flag.String("key", "", "TLS key (PEM)")
	overH2 := flag.Bool("ws-over-h2", false, "serve WebSocket over HTTP/2 too (RFC 8441 extended CONNECT)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	engine, err := parseEngine(*engineName)
	if err != nil {
		log.Error("bad -engine", "err", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	srv := newServer(newRoom().handler(), engine, *overH2)
	srv.Logger = log
	if *certFile != "" {
		log.Info("listening", "url", "https://"+ln.Addr().String()+"/", "ws-over-h2", *overH2)
		err = srv.ServeTLS(ln, *certFile, *keyFile)
	} else {
		log.Info("listening", "url", "http://"+ln.Addr().String()+"/")
		err = srv.Serve(ln)
	}
	if err != nil {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
}

// newServer is the chat's server: h on engine, with WebSocket over HTTP/2
// when overH2 (over TLS, where browsers speak HTTP/2).
func newServer(h riptide.Handler, engine riptide.Engine, overH2 bool) *riptide.Server {
	return &riptide.Server{Engine: engine, Handler: h, HTTP2: &riptide.HTTP2Config{EnableConnectProtocol: overH2}}
}

// room is the set of connected clients.
type room struct {
	mu    sync.Mutex
	conns map[*websocket.Conn]struct{}
}

func newRoom() *room { return &room{conns: make(map[*websocket.Conn]struct{})} }

// handler serves the page at / and the WebSocket at /ws.
func (rm *room) handler() riptide.Handler {
	opts := &websocket.Options{Compression: true, ReadLimit: 64 << 10, ReadTimeout: 5 * time.Minute}
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/":
			x.SetContentType("text/html; charset=utf-8")
			x.Write(page)
		case "/ws":
			c, err := websocket.Upgrade(x, opts)
			if err != nil {
				return
			}
			go rm.serve(c)
		default:
			x.Error(404, "not found")
		}
	})
}

// serve relays c's messages to the room until c ends.
func (rm *room) serve(c *websocket.Conn) {
	rm.mu.Lock()
	rm.conns[c] = struct{}{}
	rm.mu.Unlock()
	defer func() {
		rm.mu.Lock()
		delete(rm.conns, c)
		rm.mu.Unlock()
		c.Close()
	}()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		rm.broadcast(msg)
	}
}

// broadcast sends msg to everyone, encoded once. A client that cannot take
// it within a second is dropped rather than holding up the room.
func (rm *room) broadcast(msg []byte) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg, true)
	if err != nil {
		return
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for c := range rm.conns {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if err := c.WritePreparedMessage(pm); err != nil {
			delete(rm.conns, c)
			c.NetConn().Close()
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
