package riptide

import (
	"io"
	"net/http"
	"net/textproto"
	"sync/atomic"
)

// compatBody is Request.Body for requests that have one: it reads the
// engine's body stream while the handler runs and fails afterwards. It is
// only ever compatRequest.body: its request is found from where it lies
// (rq), not kept in a field, so that compatRequest fills its words.
type compatBody struct {
	// ex is the request's exchange, for Close (a closed HTTP/2 stream's
	// body makes a Read blocked in another goroutine return).
	ex       exchange
	closed   atomic.Bool
	trailers bool // request trailers merged into Request.Trailer
}

// Read reads the request body.
func (b *compatBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	cx := &b.rq().ctx
	cx.lock()
	defer cx.unlock()
	if cx.ended.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	x := cx.x
	var n int
	var err error
	if br := &x.conn.body; br.stream {
		var ok bool
		if n, err, ok = br.beginStreamRead(p); ok {
			// The read waits without the lock, so that the handler may
			// write the response meanwhile (full duplex, as net/http's
			// HTTP/2), and Close may make it return. The read is counted
			// (enterRead) while the handler has not returned, and the
			// stream is not given back to the engine before it leaves
			// (endReads, on HTTP/2 and HTTP/3 alike): it never reads a
			// stream reused for another request.
			br.enterRead()
			cx.unlock()
			n, err = b.ex.readBody(p)
			br.leaveRead()
			cx.lock()
			if cx.ended.Load() {
				return 0, http.ErrBodyReadAfterClose
			}
			n, err = br.endStreamRead(n, err)
		}
	} else {
		n, err = br.Read(p)
	}
	switch err {
	case io.EOF:
		if !b.trailers {
			b.trailers = true
			b.mergeTrailers(x)
		}
	case ErrBodyReadAfterClose:
		err = http.ErrBodyReadAfterClose
	case ErrBodyTooLarge:
		// What net/http's http.MaxBytesReader returns, and what code
		// written for net/http looks for with errors.As.
		err = &http.MaxBytesError{Limit: x.conn.body.limit}
	}
	return n, err
}

// mergeTrailers adds the received trailer fields to Request.Trailer, as
// net/http does when the body reaches io.EOF.
func (b *compatBody) mergeTrailers(x *Ctx) {
	ts := x.Trailers()
	if len(ts) == 0 {
		return
	}
	r := &b.rq().req
	if r.Trailer == nil {
		r.Trailer = make(http.Header, len(ts))
	}
	for _, f := range ts {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		r.Trailer[k] = append(r.Trailer[k], string(f.Value))
	}
}

// Close makes later reads fail. Whatever is left of the body is drained
// (or the connection closed) by the server after the handler returns; on
// HTTP/2 it is discarded now, and a Read blocked in another goroutine
// returns at once (as with net/http: grpc-go's ServeHTTP closes the body
// and then waits for its reader goroutine before it returns).
func (b *compatBody) Close() error {
	b.closed.Store(true)
	b.ex.closeBody(&b.rq().ctx.ended)
	return nil
}
