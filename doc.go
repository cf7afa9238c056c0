// Package riptide is a fast, production-grade HTTP server for Go. It serves
// HTTP/1.1, HTTP/2 over TLS (negotiated by ALPN) and cleartext HTTP/2 (h2c,
// Server.HTTP2), through a zero-allocation native handler API or (in
// compat*.go) any http.Handler on the same engine. Package client is its
// HTTP/1.1 client.
//
// The first three lines:
//
//	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
//		c.WriteString("Hello, World!")
//	})}
//	log.Fatal(srv.ListenAndServe("127.0.0.1:8080"))
//
// # Model
//
// Two engines serve connections (see [Engine]). On Linux, plain TCP
// listeners use the epoll event loop: a connection waiting for its next
// request holds no goroutine and no buffer, and a pooled worker goroutine
// takes it when a request arrives (EngineOnLoop runs non-blocking native
// handlers on the loop itself). Elsewhere, and for TLS and other
// listeners, the goroutine engine gives each connection its own goroutine.
// Either way an HTTP/1.1 connection is served by one goroutine at a time,
// which parses requests with the sans-I/O codec in package h1 and runs the
// handler for each in turn; handlers may block. HTTP/2 connections (TLS
// with ALPN "h2", or h2c) run each stream's handler on a pooled worker
// goroutine, concurrently with the connection's other streams.
// Per-connection state (buffers, the parsed request, the [Ctx]) is pooled
// and reused, so serving a request allocates nothing. Every complete
// request already in the read buffer is served before the connection
// writes: a pipelined batch of responses leaves in one write, and so does a
// single response.
//
// # Ownership
//
// A [Ctx] and everything obtained from it (request byte slices, the body
// reader) belong to the connection and are reused as soon as the handler
// returns. Copy what must outlive the handler. The only exception is the
// channel returned by [Ctx.Done].
//
// # Responses
//
// A handler sets a status and header fields and writes a body. A body that
// fits Server.WriteBufferSize is buffered and sent with Content-Length when
// the handler returns. [Ctx.Flush] (or a larger body) commits the head and
// streams the rest: chunked on HTTP/1.1 unless [Ctx.SetContentLength] was
// called. Streaming happens on the handler's goroutine; server-sent events
// need no extra goroutine:
//
//	c.SetHeader("Content-Type", "text/event-stream")
//	for ev := range events {
//		fmt.Fprintf(c, "data: %s\n\n", ev)
//		c.Flush()
//	}
//
// # Errors and limits
//
// Malformed requests are answered by the server (400, 413, 414, 431, 501,
// 505, with Connection: close) and never reach the handler. A panicking
// handler is logged through Server.Logger and answered 500 (or its
// connection is cut if part of the response was sent); the server keeps
// serving. Timeouts and limits are fields of [Server]; its zero value has
// safe defaults.
package riptide
