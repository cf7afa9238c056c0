// Command riptide-ws is the WebSocket benchmark server on riptide's native
// API: websocket.Upgrade on a *riptide.Ctx, each Conn served on its own
// goroutine (bench/internal/wsserver for the routes).
//
//	riptide-ws -addr 127.0.0.1:8080 [-engine auto|goroutine|eventloop|onloop]
package main

import (
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver/riptidews"
)

func main() {
	o := wsserver.ParseFlags("riptide-ws")
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		path := string(x.Path())
		if path == wsserver.HeapPath {
			x.SetContentType("application/json")
			x.Write(wsserver.Heap())
			return
		}
		c, err := websocket.Upgrade(x, riptidews.Options)
		if err != nil {
			return // refused with a 4xx
		}
		riptidews.Serve(path, c)
	})}
	benchserver.MainRiptide(o, srv)
}
