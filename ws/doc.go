// Package ws is riptide's sans-I/O WebSocket codec (RFC 6455, with
// permessage-deflate from RFC 7692).
//
// Like package h1 it knows nothing of sockets or goroutines: it parses and
// writes frame headers in caller-owned byte slices, masks payloads in place,
// tracks the rules a sequence of frames must follow (fragmentation, control
// frames, reserved bits, close codes, UTF-8 of text across fragments,
// limits), and negotiates and runs permessage-deflate. The server and client
// connections of package websocket, the fuzzers and tests drive the same
// code. Nothing here allocates per frame.
//
// A reader parses a header, checks it, unmasks the payload and, for text,
// feeds it to the UTF-8 check:
//
//	h, n, err := ws.ParseHeader(buf)   // n == 0, err == nil: need more bytes
//	err = state.Frame(&h)              // *ws.Error carries the close code to send
//	pos = ws.Mask(h.Key, pos, payload) // unmask in place
//	err = state.Payload(payload)       // UTF-8 of text, message size
//
// A writer appends a header and the payload:
//
//	b = ws.AppendHeader(b, ws.Header{Fin: true, Op: ws.OpText, Length: int64(len(p))})
//	b = append(b, p...)
package ws
