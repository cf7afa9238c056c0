// Command gorilla-ws is the WebSocket benchmark server on
// gorilla/websocket (pinned in bench/go.mod) and net/http: Upgrader with
// its default buffers, each Conn served on its own goroutine after the
// handler returns (bench/internal/wsserver for the routes; a broadcast
// goes out as a websocket.PreparedMessage).
//
//	gorilla-ws -addr 127.0.0.1:8080
package main

import (
	"context"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// conn serialises the writes of the broadcaster and of the Conn's own
// goroutine (a gorilla Conn takes one writer at a time).
type conn struct {
	*websocket.Conn
	mu sync.Mutex
}

var hub wsserver.Hub[*conn]

func main() {
	o := wsserver.ParseFlags("gorilla-ws")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wsserver.ServeHeap(w, r) {
			return
		}
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade answered the error
		}
		switch r.URL.Path {
		case wsserver.SubscribePath:
			go wsserver.Subscribe[int](&hub, &conn{Conn: c})
		case wsserver.PublishPath:
			go publish(c)
		default:
			go wsserver.Echo[int](c)
		}
	})
	srv := &http.Server{Handler: h}
	benchserver.Main(o, srv.Serve, func() { srv.Shutdown(context.Background()) })
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
