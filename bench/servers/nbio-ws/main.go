// Command nbio-ws is the WebSocket benchmark server on lesismal/nbio
// (pinned in bench/go.mod): an nbhttp.Engine (event-driven, IOModNonBlocking,
// its defaults) with nbhttp/websocket upgraders whose OnMessage callbacks
// serve the routes (bench/internal/wsserver): no goroutine per connection.
// A broadcast is one WriteMessage per member (nbio's Conn writes are safe
// for concurrent use).
//
//	nbio-ws -addr 127.0.0.1:8080
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

var hub wsserver.Hub[*websocket.Conn]

func main() {
	o := wsserver.ParseFlags("nbio-ws")
	logging.SetLevel(logging.LevelError)

	echo := websocket.NewUpgrader()
	echo.OnMessage(func(c *websocket.Conn, mt websocket.MessageType, data []byte) {
		c.WriteMessage(mt, data)
	})
	sub := websocket.NewUpgrader()
	sub.OnOpen(hub.Add)
	sub.OnClose(func(c *websocket.Conn, _ error) { hub.Remove(c) })
	pub := websocket.NewUpgrader()
	pub.OnMessage(func(_ *websocket.Conn, mt websocket.MessageType, data []byte) {
		for _, m := range hub.Members() {
			m.WriteMessage(mt, data)
		}
	})
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := echo
		switch r.URL.Path {
		case wsserver.HeapPath:
			w.Header().Set("Content-Type", "application/json")
			w.Write(wsserver.Heap())
			return
		case wsserver.SubscribePath:
			u = sub
		case wsserver.PublishPath:
			u = pub
		}
		u.Upgrade(w, r, nil) // answers the error itself
	})

	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{ln.Addr().String()},
		// The listener opened above, so that the announced port is the
		// served one (-addr may ask for port 0).
		Listen:  func(string, string) (net.Listener, error) { return ln, nil },
		Handler: mux,
	})
	if err := engine.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "nbio:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	benchserver.Wait(o, func() { engine.Shutdown(context.Background()) })
}
