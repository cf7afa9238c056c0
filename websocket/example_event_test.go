package websocket_test

import (
	"context"
	"fmt"
	"net"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
)

// An echo server in the event-driven mode: each message comes to
// OnMessage and goes back; between messages the connection is parked on
// the event loop with no goroutine and no buffer.
func ExampleServe() {
	echo := &websocket.Handler{
		OnMessage: func(p *websocket.Peer, mt websocket.MessageType, msg []byte) {
			p.WriteMessage(mt, msg) // msg is valid during the call only
		},
		OnClose: func(p *websocket.Peer, err error) {},
	}
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		websocket.Serve(x, &websocket.Options{Compression: true}, echo)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	c, _, err := websocket.Dial(context.Background(), "ws://"+ln.Addr().String()+"/", nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.WriteMessage(websocket.TextMessage, []byte("hello"))
	_, msg, err := c.ReadMessage()
	fmt.Println(string(msg), err)
	// Output: hello <nil>
}

// Broadcast: a message encoded once and written to every peer, its bytes
// shared by all of them (queued by reference for a peer that is behind).
func ExamplePeer_WritePreparedMessage() {
	var peers []*websocket.Peer // kept under a lock by a real server
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, []byte("news"), true)
	if err != nil {
		panic(err)
	}
	for _, p := range peers {
		p.WritePreparedMessage(pm) // never waits: ErrWriteQueueFull for a peer that stopped reading
	}
	fmt.Println(len(peers), "peers")
	// Output: 0 peers
}
