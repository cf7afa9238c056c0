package riptide

import (
	"bytes"
	"io"
	"iter"
	"net"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// Ctx is one request and its response, handed to [Handler.ServeCtx].
//
// Ownership: a Ctx belongs to its connection and is reused for the next
// request on it. Everything it returns — request byte slices, the body
// reader, request trailers, the Ctx itself — is valid only until ServeCtx
// returns; keep a copy (string(b), bytes.Clone) of what you need later. A
// Ctx is not safe for concurrent use: its methods must be called from the
// handler's goroutine, or from one other goroutine at a time that the
// handler waits for before returning. The one exception is Done, whose
// channel may be kept and waited on from any goroutine.
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

	// Disconnect watch state, see watch.go.
	done       chan struct{}
	doneClosed bool
	watching   bool
	watchOnEOF bool
	watchN     int
	watchErr   error

	// onDone, when set, is called when done is closed (client gone, handler
	// returned, or Hijack), on whichever goroutine closes it. The compat
	// door sets it to cancel the request's Context; stopWatch clears it.
	onDone func()
	// compat is the compat door's per-connection state (compat.go),
	// created on first use and pooled with the Ctx.
	compat *compatState
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

// Host returns the Host header (possibly empty for HTTP/1.0).
func (x *Ctx) Host() []byte { return x.req.Host }

// ProtoMinor returns 1 for HTTP/1.1 and 0 for HTTP/1.0.
func (x *Ctx) ProtoMinor() int { return x.req.Minor }

// Header returns the value of the first request header field named name
// (case-insensitive), or nil. Request().Headers has them all.
func (x *Ctx) Header(name string) []byte { return x.req.Get(name) }

// ContentLength returns the declared request body length: -1 for a chunked
// body, 0 for none.
func (x *Ctx) ContentLength() int64 { return x.req.ContentLength }

// RemoteAddr returns the client's network address.
func (x *Ctx) RemoteAddr() net.Addr { return x.conn.nc.RemoteAddr() }

// LocalAddr returns the server address the request arrived on.
func (x *Ctx) LocalAddr() net.Addr { return x.conn.nc.LocalAddr() }

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
// (valid until the handler returns) and returns it.
func (x *Ctx) ReadBody() ([]byte, error) {
	// Grow scratch itself: growing a slice of its tail would leave scratch
	// on the old array, too short for the bytes read.
	start := len(x.scratch)
	for {
		if len(x.scratch) == cap(x.scratch) {
			x.scratch = append(x.scratch, 0)[:len(x.scratch)]
		}
		n, err := x.conn.body.Read(x.scratch[len(x.scratch):cap(x.scratch)])
		x.scratch = x.scratch[:len(x.scratch)+n]
		if err == io.EOF {
			return x.scratch[start:], nil
		}
		if err != nil {
			return x.scratch[start:], err
		}
	}
}

// Trailers returns the request's trailer fields once its chunked body has
// been read to io.EOF (nil before, and for bodies that are not chunked).
func (x *Ctx) Trailers() []h1.Header {
	b := &x.conn.body
	if b.stream != nil && b.done {
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
	start := len(x.scratch)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		x.scratch = append(x.scratch, c)
	}
	return x.scratch[start:len(x.scratch):len(x.scratch)]
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
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
	return c.nc.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline of the connection for the rest
// of this request, replacing WriteTimeout until the next request. A zero t
// means no deadline.
func (x *Ctx) SetWriteDeadline(t time.Time) error {
	c := x.conn
	c.wkind = dlUser
	return c.nc.SetWriteDeadline(t)
}
