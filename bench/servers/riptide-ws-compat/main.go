// Command riptide-ws-compat is the WebSocket benchmark server on riptide's
// compat door: websocket.Accept in an http.Handler served through
// riptide.FromHTTP, each Conn on its own goroutine (bench/internal/wsserver
// for the routes).
//
//	riptide-ws-compat -addr 127.0.0.1:8080 [-engine auto|goroutine|eventloop|onloop]
package main

import (
	"net/http"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver/riptidews"
)

func main() {
	o := wsserver.ParseFlags("riptide-ws-compat")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wsserver.ServeHeap(w, r) {
			return
		}
		c, err := websocket.Accept(w, r, riptidews.Options)
		if err != nil {
			return // refused with a 4xx
		}
		riptidews.Serve(r.URL.Path, c)
	})
	benchserver.MainRiptide(o, &riptide.Server{Handler: riptide.FromHTTP(h)})
}
