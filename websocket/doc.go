// Package websocket serves and dials WebSocket connections (RFC 6455, with
// permessage-deflate from RFC 7692) on riptide, over the sans-I/O codec in
// package ws.
//
// A native handler upgrades its Ctx; an http.Handler (riptide's compat
// door, or net/http's own server) calls Accept; both give the same Conn:
//
//	func echo(x *riptide.Ctx) {
//		c, err := websocket.Upgrade(x, &websocket.Options{Compression: true})
//		if err != nil {
//			return // the refusal was answered
//		}
//		defer c.Close()
//		for {
//			mt, msg, err := c.ReadMessage()
//			if err != nil {
//				return
//			}
//			if err := c.WriteMessage(mt, msg); err != nil {
//				return
//			}
//		}
//	}
//
// Dial is the client. See docs/websocket.md for limits, defaults, memory per
// connection and migrating from gorilla/websocket and coder/websocket.
package websocket
