// Command riptide-ws-event is the WebSocket benchmark server on riptide's
// event-driven mode: websocket.Serve on a *riptide.Ctx with OnOpen /
// OnMessage / OnClose callbacks; on the event-loop engine an idle
// connection is parked on its loop, no goroutine and no buffer held
// (bench/internal/wsserver for the routes; a broadcast goes out as a
// websocket.PreparedMessage, its frame encoded once).
//
//	riptide-ws-event -addr 127.0.0.1:8080 [-engine auto|goroutine|eventloop|onloop]
package main

import (
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver/riptidews"
)

var hub wsserver.Hub[*websocket.Peer]

var (
	echo = &websocket.Handler{OnMessage: func(p *websocket.Peer, mt websocket.MessageType, msg []byte) {
		p.WriteMessage(mt, msg)
	}}
	subscribe = &websocket.Handler{
		OnOpen:  hub.Add,
		OnClose: func(p *websocket.Peer, _ error) { hub.Remove(p) },
	}
	publish = &websocket.Handler{OnMessage: func(_ *websocket.Peer, mt websocket.MessageType, msg []byte) {
		pm, err := websocket.NewPreparedMessage(mt, msg, false)
		if err != nil {
			return
		}
		for _, m := range hub.Members() {
			m.WritePreparedMessage(pm)
		}
	}}
)

func main() {
	o := wsserver.ParseFlags("riptide-ws-event")
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		h := echo
		switch string(x.Path()) {
		case wsserver.HeapPath:
			x.SetContentType("application/json")
			x.Write(wsserver.Heap())
			return
		case wsserver.SubscribePath:
			h = subscribe
		case wsserver.PublishPath:
			h = publish
		}
		websocket.Serve(x, riptidews.Options, h) // refusals answered by Serve
	})}
	benchserver.MainRiptide(o, srv)
}
