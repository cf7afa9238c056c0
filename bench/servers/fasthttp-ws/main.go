// Command fasthttp-ws is the WebSocket benchmark server on
// fasthttp/websocket (pinned in bench/go.mod) over valyala/fasthttp
// (v1.74.0, default server settings): FastHTTPUpgrader, the Conn served in
// the handler fasthttp runs after the hijack (its goroutine per
// connection; bench/internal/wsserver for the routes; a broadcast goes out
// as a websocket.PreparedMessage).
//
//	fasthttp-ws -addr 127.0.0.1:8080
package main

import (
	"sync"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

var upgrader = websocket.FastHTTPUpgrader{CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}

// conn serialises the writes of the broadcaster and of the Conn's own
// goroutine (one writer at a time).
type conn struct {
	*websocket.Conn
	mu sync.Mutex
}

var hub wsserver.Hub[*conn]

func main() {
	o := wsserver.ParseFlags("fasthttp-ws")
	h := func(ctx *fasthttp.RequestCtx) {
		var serve websocket.FastHTTPHandler
		switch string(ctx.Path()) {
		case wsserver.HeapPath:
			ctx.SetContentType("application/json")
			ctx.Write(wsserver.Heap())
			return
		case wsserver.SubscribePath:
			serve = func(c *websocket.Conn) { wsserver.Subscribe[int](&hub, &conn{Conn: c}) }
		case wsserver.PublishPath:
			serve = publish
		default:
			serve = func(c *websocket.Conn) { wsserver.Echo[int](c) }
		}
		upgrader.Upgrade(ctx, serve) // answers the error itself
	}
	srv := &fasthttp.Server{Handler: h}
	benchserver.Main(o, srv.Serve, func() { srv.Shutdown() })
}

func publish(c *websocket.Conn) {
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		pm, err := websocket.NewPreparedMessage(mt, msg)
		if err != nil {
			return
		}
		for _, m := range hub.Members() {
			m.mu.Lock()
			m.WritePreparedMessage(pm)
			m.mu.Unlock()
		}
	}
}
