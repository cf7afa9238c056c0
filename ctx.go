package riptide

import (
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// Ctx is one request and its response, handed to [Handler.ServeCtx].
//
// Ownership: a Ctx belongs to its connection and is reused for the next
// request on it. Everything it returns — request byte slices, the body
// reader, request trailers, the Ctx itself — is valid only until ServeCtx
// returns; keep a copy (string(b), bytes.Clone) of what you need later,
// and give a goroutine that outlives the handler the context Context
// returns, not the Ctx. A Ctx is not safe for concurrent use: its methods
// must be called from the handler's goroutine, or from one other goroutine
// at a time that the handler waits for before returning. The one
// exception is Done, whose channel may be kept and waited on from any
// goroutine.
//
// The race detector catches a handler that keeps a Ctx and uses it while a
// later request on the same connection is being served (see
// TestRetainedCtxIsARace).
type Ctx struct {
	conn *conn
	req  h1.Request
	resp response

	// scratch holds decoded query values and the like; reset per request.
	scratch []byte
	// pv holds the path values set by a router (pathvalue.go).
	pv pathValues
	// locals holds SetLocal's values, pattern SetPattern's (locals.go).
	locals  locals
	pattern string

	// Disconnect watch state, see watch.go. watchMu guards done,
	// doneClosed, watched, watching, watchOnEOF and onDone: Done and Err
	// may be called from any goroutine (a Ctx is a context.Context that
	// libraries watch).
	watchMu    sync.Mutex
	inHandler  atomic.Bool   // the handler is running: Done may start a watch
	watchUsed  atomic.Bool   // Done was called for this request
	done       chan struct{} // made by Done (not by watchFor)
	doneClosed bool
	watched    bool // Done or watchFor was called for this request
	watching   bool
	watchOnEOF bool
	watchN     int
	watchErr   error
	// watchCancel stops a watch that is a callback (watchNotifier);
	// it reports whether the callback will not run.
	watchCancel func() bool
	dl          handlerDeadline // CancelAfter, deadline.go

	// onDone, when set, is told when done is closed (client gone, handler
	// returned, or Hijack), on whichever goroutine closes it. The compat
	// door sets it to the request's Context, to cancel it; stopWatch
	// clears it. An interface rather than a func, so that setting it
	// makes no closure.
	onDone doneHook
	// reqCtx is the context Context made for this request, cancelled
	// with done and dropped at the request's end (reqctx.go); guarded by
	// watchMu.
	reqCtx *requestContext
	// filter, when set, takes the body written with Write, WriteString
	// and Flush (bodyfilter.go); cleared per request.
	filter BodyFilter
	// compat is the compat door's per-connection state (compat.go),
	// created on first use and pooled with the Ctx.
	compat *compatState
	// jsonEnc is the encoder of Ctx.JSON (json.go), created on first use
	// and kept with the Ctx.
	jsonEnc *json.Encoder
	// race is the race-checked zero-copy state (racecheck.go), used in
	// race builds only.
	race raceState
}

// Request returns the parsed request head: method, target, version, every
// header field in order, framing. Its slices point into the connection's
// read buffer (see Ctx for how long they stay valid).
func (x *Ctx) Request() *h1.Request { return &x.req }

// Method returns the request method, e.g. "GET".
func (x *Ctx) Method() []byte { return x.req.Method }

// Path returns the path of the request target, still percent-encoded, e.g.
// "/a%20b". It is empty for asterisk-form ("*") and authority-form targets.
func (x *Ctx) Path() []byte { return x.req.Path }

// RawQuery returns the query of the request target without the '?', still
// encoded; nil when the target has no '?'.
func (x *Ctx) RawQuery() []byte { return x.req.Query }

// RequestURI returns the request target exactly as sent.
func (x *Ctx) RequestURI() []byte { return x.req.Target }

// Host returns the host the request is for: the authority of an
// absolute-form target ("http://host:port/path"), which RFC 9112 §3.2.2
// says wins over the Host header, as in net/http's Request.Host; else the
// Host header (possibly empty for HTTP/1.0). Request().Host is always the
// header.
func (x *Ctx) Host() []byte {
	if x.req.Form == h1.AbsoluteForm {
		return targetAuthority(x.req.Target)
	}
	return x.req.Host
}

// targetAuthority returns the authority of an absolute-form target, which
// the parser has validated: between "://" and the first '/' or '?'.
func targetAuthority(t []byte) []byte {
	i := bytes.Index(t, []byte("://"))
	if i < 0 {
		return nil
	}
	auth := t[i+3:]
	if j := bytes.IndexAny(auth, "/?"); j >= 0 {
		auth = auth[:j]
	}
	return auth
}

// ProtoMinor returns 1 for HTTP/1.1 and 0 for HTTP/1.0.
func (x *Ctx) ProtoMinor() int { return x.req.Minor }

// Header returns the value of the first request header field named name
// (case-insensitive), or nil. Request().Headers has them all.
func (x *Ctx) Header(name string) []byte { return x.req.Get(name) }

// ContentLength returns the declared request body length: -1 for a chunked
// body, 0 for none.
func (x *Ctx) ContentLength() int64 { return x.req.ContentLength }

// doneHook is what Ctx.onDone is told through.
type doneHook interface {
	// engineDone is called once Ctx's done channel is closed.
	engineDone()
}

// RemoteAddr returns the client's network address: the connection's peer,
// or the client named by a PROXY protocol header (Server.ProxyProtocol) or
// by a trusted proxy's forwarding header (Server.Forwarded).
func (x *Ctx) RemoteAddr() net.Addr {
	if x.conn.srv.Forwarded != nil { // forwarded.go
		if a := x.forwardedAddr(); a != nil {
			return a
		}
	}
	return x.conn.ex.remoteAddr()
}

// LocalAddr returns the server address the request arrived on.
func (x *Ctx) LocalAddr() net.Addr { return x.conn.ex.localAddr() }

// Body returns the request body as a stream. Bytes come straight from the
// connection as the handler reads them (a slow reader slows the client, no
// body is buffered whole); the first read that has to wait on the network
// sends "100 Continue" when the client asked for it. Read returns io.EOF at
// the end, ErrBodyTooLarge past Server.MaxRequestBodySize, and
// io.ErrUnexpectedEOF if the client stops early. A body the handler leaves
// unread is drained (up to DefaultMaxDrainBytes) or the connection is
// closed, so it never corrupts the next request.
func (x *Ctx) Body() io.Reader { return &x.conn.body }

// ReadBody reads the whole request body into a buffer owned by the Ctx
// (valid until the handler returns) and returns it. Since the whole body
// is held in memory, it is bounded even when streaming is not: by
// Server.MaxRequestBodySize, or DefaultMaxReadBodySize when that is zero.
// A larger body fails with ErrBodyTooLarge (a declared length before
// anything is read) and the connection closes after the response, which is
// 413 if the handler writes nothing. Use Body to stream a larger one.
func (x *Ctx) ReadBody() ([]byte, error) {
	b := &x.conn.body
	limit := x.conn.cfg.readBodyMax
	start := len(x.scratch)
	if !b.chunked && !b.done && b.err == nil && !b.closed {
		if limit > 0 && b.read+b.remaining > limit {
			return x.scratch[start:], b.tooLarge()
		}
		// The length is declared: one buffer of the right size (a peer's
		// claim is trusted only up to the limit, or 1 MiB without one).
		want := b.remaining
		if limit <= 0 {
			want = min(want, readBodyBlockMax)
		}
		x.scratch = slices.Grow(x.scratch, int(want))
	}
	err := x.readAll(b, limit)
	return x.scratch[start:], err
}

// readBodyBlockMax is the largest block readAll allocates at once.
const readBodyBlockMax = 1 << 20

// readAll reads the rest of the body to EOF onto x.scratch. Once scratch's
// capacity is used up, further bytes go into blocks of doubling size (up to
// readBodyBlockMax) that are joined once at the end: a body of unknown
// length costs about twice its size in allocations, where growing one
// slice with append costs four to five times.
func (x *Ctx) readAll(b *bodyReader, limit int64) error {
	var blocks [][]byte
	cur := x.scratch // filled in place; later the newest block
	size := 4 << 10
	for {
		if len(cur) == cap(cur) {
			if blocks == nil {
				x.scratch = cur
			}
			blocks = append(blocks, cur)
			size = min(2*size, readBodyBlockMax)
			cur = make([]byte, 0, size)
		}
		p := cur[len(cur):cap(cur)]
		if limit > 0 {
			// One byte past the limit proves the body too large.
			p = p[:min(int64(len(p)), limit-b.read+1)]
		}
		n, err := b.Read(p)
		cur = cur[:len(cur)+n]
		if err == nil && limit > 0 && b.read > limit {
			err = b.tooLarge()
		}
		if err != nil {
			x.joinBlocks(blocks, cur)
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// joinBlocks leaves on x.scratch what readAll read: cur alone, or scratch
// followed by the later blocks and cur.
func (x *Ctx) joinBlocks(blocks [][]byte, cur []byte) {
	if blocks == nil {
		x.scratch = cur
		return
	}
	n := len(cur)
	for _, blk := range blocks[1:] {
		n += len(blk)
	}
	x.scratch = slices.Grow(x.scratch, n)
	for _, blk := range blocks[1:] {
		x.scratch = append(x.scratch, blk...)
	}
	x.scratch = append(x.scratch, cur...)
}

// Trailers returns the request's trailer fields once its chunked body has
// been read to io.EOF (nil before, and for bodies that are not chunked).
func (x *Ctx) Trailers() []h1.Header {
	b := &x.conn.body
	if b.stream && b.done {
		return b.trailers // HTTP/2 (h2ctx.go)
	}
	if !b.chunked || !b.done {
		return nil
	}
	return b.dec.Trailers
}

// QueryArg returns the value of the first query parameter named name,
// percent-decoded and with '+' as space, or nil when absent. Decoded values
// live in a buffer owned by the Ctx.
func (x *Ctx) QueryArg(name string) []byte {
	for k, v := range x.QueryArgs() {
		if string(k) == name {
			return v
		}
	}
	return nil
}

// QueryArgs iterates over the query parameters in order, each name and value
// percent-decoded (into a buffer owned by the Ctx) and '+' read as space.
// Malformed escapes are passed through as they are.
func (x *Ctx) QueryArgs() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		q := x.req.Query
		for len(q) > 0 {
			var pair []byte
			if i := bytes.IndexByte(q, '&'); i >= 0 {
				pair, q = q[:i], q[i+1:]
			} else {
				pair, q = q, nil
			}
			if len(pair) == 0 {
				continue
			}
			k, v := pair, []byte(nil)
			if i := bytes.IndexByte(pair, '='); i >= 0 {
				k, v = pair[:i], pair[i+1:]
			}
			if !yield(x.unescape(k), x.unescape(v)) {
				return
			}
		}
	}
}

// unescape decodes query escapes into scratch, or returns s itself when it
// has none (the common case, no copy).
func (x *Ctx) unescape(s []byte) []byte {
	if bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '+') < 0 {
		return s
	}
	return x.decode(s, true)
}

// decode appends s to scratch with its %XX escapes decoded (and '+' as
// space when plus is set) and returns that copy. Malformed escapes are
// kept as they are.
func (x *Ctx) decode(s []byte, plus bool) []byte {
	start := len(x.scratch)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+' && plus:
			c = ' '
		case c == '%' && i+2 < len(s) && ascii.IsHex(s[i+1]) && ascii.IsHex(s[i+2]):
			c = ascii.Unhex(s[i+1])<<4 | ascii.Unhex(s[i+2])
			i += 2
		}
		x.scratch = append(x.scratch, c)
	}
	return x.scratch[start:len(x.scratch):len(x.scratch)]
}

// Cookie returns the value of the first request cookie named name, or nil.
func (x *Ctx) Cookie(name string) []byte {
	for k, v := range x.Cookies() {
		if string(k) == name {
			return v
		}
	}
	return nil
}

// Cookies iterates over the request cookies (every Cookie header, RFC 6265
// §5.4 "name=value" pairs separated by ';'), in order. Values are returned
// as sent, without surrounding double quotes; pairs without '=' are skipped.
func (x *Ctx) Cookies() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		hs := x.req.Headers
		for i := range hs {
			if hs[i].Key != h1.HeaderCookie {
				continue
			}
			v := hs[i].Value
			for len(v) > 0 {
				var pair []byte
				if j := bytes.IndexByte(v, ';'); j >= 0 {
					pair, v = v[:j], v[j+1:]
				} else {
					pair, v = v, nil
				}
				pair = bytes.TrimSpace(pair)
				eq := bytes.IndexByte(pair, '=')
				if eq <= 0 {
					continue
				}
				name, val := bytes.TrimSpace(pair[:eq]), bytes.TrimSpace(pair[eq+1:])
				if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
					val = val[1 : len(val)-1]
				}
				if !yield(name, val) {
					return
				}
			}
		}
	}
}

// SetReadDeadline sets the read deadline of the connection for the rest of
// this request (body reads); the server's own timeouts resume with the next
// request. A zero t means no deadline.
func (x *Ctx) SetReadDeadline(t time.Time) error {
	c := x.conn
	c.rkind = dlUser
	c.body.waited = true // the user's deadline replaces ReadBodyTimeout
	return c.ex.setReadDeadline(t)
}

// SetWriteDeadline sets the write deadline of the connection for the rest
// of this request, replacing WriteTimeout until the next request. A zero t
// means no deadline.
func (x *Ctx) SetWriteDeadline(t time.Time) error {
	c := x.conn
	c.wkind = dlUser
	return c.ex.setWriteDeadline(t)
}
