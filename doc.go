// Package riptide is a fast, production-grade HTTP/1.1 server for Go: a
// zero-allocation native handler API, and (in compat*.go) any http.Handler
// served on the same engine.
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
// A connection is served by one goroutine at a time, which reads
// requests, parses them with the sans-I/O codec in package h1 and runs the
// handler for each in turn; handlers may block. On Linux, plain TCP
// listeners use an epoll event loop (see [Engine]): a connection waiting
// for its next request holds no goroutine and no buffer, and a pooled
// worker goroutine takes it when a request arrives. Elsewhere, and for TLS,
// each connection keeps its own goroutine. Per-connection state (buffers,
// the parsed request, the [Ctx]) is pooled and reused, so serving a
// request allocates nothing. Every complete
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
