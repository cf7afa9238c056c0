// Package riptidews is the connection side of the riptide WebSocket
// benchmark servers (riptide-ws, native Upgrade; riptide-ws-compat,
// Accept on the compat door): what each route does with the
// *websocket.Conn once upgraded. Each Conn is served on its own goroutine
// and the handler returns, as docs/websocket.md advises (the engine then
// holds nothing for the connection).
package riptidews

import (
	"github.com/riptide-http/riptide/websocket"

	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

// Options are the Conn options of both servers: riptide's defaults (no
// compression: the harness offers none).
var Options = &websocket.Options{}

var hub wsserver.Hub[*websocket.Conn]

// Serve serves c as the route at path asks (wsserver.EchoPath,
// SubscribePath or PublishPath) until the peer closes it.
func Serve(path string, c *websocket.Conn) {
	switch path {
	case wsserver.SubscribePath:
		go wsserver.Subscribe[websocket.MessageType](&hub, c)
	case wsserver.PublishPath:
		go publish(c)
	default:
		go wsserver.Echo[websocket.MessageType](c)
	}
}

// publish sends every message to the group as a PreparedMessage: the
// frame is encoded once and each Conn writes the same bytes.
func publish(c *websocket.Conn) {
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		pm, err := websocket.NewPreparedMessage(mt, msg, false)
		if err != nil {
			return
		}
		for _, m := range hub.Members() {
			m.WritePreparedMessage(pm)
		}
	}
}
