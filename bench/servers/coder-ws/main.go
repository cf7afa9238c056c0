// Command coder-ws is the WebSocket benchmark server on coder/websocket
// (pinned in bench/go.mod) and net/http: Accept without compression, each
// Conn served on its own goroutine after the handler returns
// (bench/internal/wsserver for the routes; a broadcast is one Write per
// member, coder's Write being safe for concurrent use).
//
//	coder-ws -addr 127.0.0.1:8080
package main

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

var opts = &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled}

var hub wsserver.Hub[*websocket.Conn]

// readLimit is the largest message, as the other servers' default (1 MiB;
// coder's own default is 32 KiB).
const readLimit = 1 << 20

func main() {
	o := wsserver.ParseFlags("coder-ws")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wsserver.ServeHeap(w, r) {
			return
		}
		c, err := websocket.Accept(w, r, opts)
		if err != nil {
			return // Accept answered the error
		}
		c.SetReadLimit(readLimit)
		switch r.URL.Path {
		case wsserver.SubscribePath:
			go subscribe(c)
		case wsserver.PublishPath:
			go publish(c)
		default:
			go echo(c)
		}
	})
	srv := &http.Server{Handler: h}
	benchserver.Main(o, srv.Serve, func() { srv.Shutdown(context.Background()) })
}

func echo(c *websocket.Conn) {
	defer c.CloseNow()
	ctx := context.Background()
	for {
		mt, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, mt, msg); err != nil {
			return
		}
	}
}

func subscribe(c *websocket.Conn) {
	hub.Add(c)
	defer c.CloseNow()
	defer hub.Remove(c)
	ctx := context.Background()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
	}
}

func publish(c *websocket.Conn) {
	defer c.CloseNow()
	ctx := context.Background()
	for {
		mt, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		for _, m := range hub.Members() {
			m.Write(ctx, mt, msg)
		}
	}
}
