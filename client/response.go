package client

import (
	"io"

	"github.com/riptide-http/riptide/h1"
)

// Response receives a response from Client.Do or Client.DoStream.
//
// A Response is owned by the caller and meant to be reused: each Do resets
// it and refills storage it keeps, so a steady stream of requests through
// one Response allocates nothing. Every slice a Response returns (status
// reason, header values, body, trailers) points into that storage and is
// valid only until the Response is passed to Do or DoStream again or Reset;
// copy what must outlive it.
//
// A Response is not safe for concurrent use.
type Response struct {
	head h1.Response
	raw  []byte // copy of the response head; head's slices point here
	body []byte

	trailers []h1.Header
	traw     []byte // trailer bytes; trailers' slices point here

	br     bodyReader
	stream bool
	// upgraded is the connection after a 101 (Switching Protocols) read
	// by DoStream or RoundTrip: it no longer speaks HTTP/1.1 and belongs to
	// whoever takes it (RoundTrip's response body); Reset closes it.
	upgraded *conn
	parsing  bool // head parse in progress: head's scan state is stale
	h3       *HTTP3Exchange

	zsrc    byteReader // gunzip source
	zbuf    []byte     // spare body buffer for gunzip
	maxBody int64
}

// Reset clears r, keeping the storage it has grown. If r holds an unread
// body stream, Reset closes it.
func (r *Response) Reset() {
	if r.stream {
		r.br.Close()
		r.stream = false
	}
	r.br = bodyReader{}
	if r.upgraded != nil {
		r.upgraded.p.closeConn(r.upgraded)
		r.upgraded = nil
	}
	if r.parsing {
		// An abandoned parse leaves scan progress in head that a new
		// response must not inherit.
		r.head = h1.Response{}
		r.parsing = false
	}
	r.head.Reset()
	r.raw = r.raw[:0]
	r.body = r.body[:0]
	r.trailers = r.trailers[:0]
	r.traw = r.traw[:0]
}

// StatusCode returns the response status code.
func (r *Response) StatusCode() int { return r.head.Status }

// Reason returns the reason phrase of the status line.
func (r *Response) Reason() []byte { return r.head.Reason }

// ProtoMinor returns the minor version of the response (0 for HTTP/1.0,
// 1 for HTTP/1.1, 0 for HTTP/2).
func (r *Response) ProtoMinor() int { return r.head.Minor }

// ProtoMajor returns the major version of the response: 1 for HTTP/1.x, 2
// for HTTP/2, 3 for HTTP/3.
func (r *Response) ProtoMajor() int { return r.head.Major }

// Header returns the value of the first header field named name
// (case-insensitive), or nil.
func (r *Response) Header(name string) []byte { return r.head.Get(name) }

// Headers returns all header fields in the order received. The slice and
// its contents must not be modified.
func (r *Response) Headers() []h1.Header { return r.head.Headers }

// ContentLength returns the Content-Length the server declared, or -1 when
// it declared none (chunked or close-delimited bodies).
func (r *Response) ContentLength() int64 { return r.head.ContentLength }

// Body returns the response body read by Do, decompressed when the client
// decoded gzip. After DoStream it is empty; read BodyStream instead.
func (r *Response) Body() []byte { return r.body }

// BodyStream returns the body of a response obtained with DoStream. The
// caller must read it to io.EOF or Close it: either returns the connection
// to the pool (Close on an unfinished body closes the connection instead).
// The stream is valid until it returns io.EOF, is closed, or r is reused.
// After Do it returns an empty stream.
func (r *Response) BodyStream() io.ReadCloser { return &r.br }

// Trailer returns the value of the first trailer field named name, or nil.
// Trailers are known once the body has been read to its end.
func (r *Response) Trailer(name string) []byte {
	for i := range r.trailers {
		if h1.EqualFold(r.trailers[i].Name, name) {
			return r.trailers[i].Value
		}
	}
	return nil
}

// Trailers returns the trailer fields received after a chunked body.
func (r *Response) Trailers() []h1.Header { return r.trailers }

// setHead copies the head bytes src (which h was parsed from) into r and
// repoints h's slices at the copy.
func (r *Response) setHead(src []byte) {
	r.raw = append(r.raw[:0], src...)
	h := &r.head
	h.Reason = rebase(r.raw, src, h.Reason)
	for i := range h.Headers {
		h.Headers[i].Name = rebase(r.raw, src, h.Headers[i].Name)
		h.Headers[i].Value = rebase(r.raw, src, h.Headers[i].Value)
	}
}

// setTrailers copies trailer fields (slices into the connection's buffer)
// into r.
func (r *Response) setTrailers(ts []h1.Header) {
	r.traw = r.traw[:0]
	for i := range ts {
		r.traw = append(r.traw, ts[i].Name...)
		r.traw = append(r.traw, ts[i].Value...)
	}
	r.trailers = r.trailers[:0]
	off := 0
	for i := range ts {
		n, v := len(ts[i].Name), len(ts[i].Value)
		r.trailers = append(r.trailers, h1.Header{
			Name:  r.traw[off : off+n : off+n],
			Value: r.traw[off+n : off+n+v : off+n+v],
			Key:   ts[i].Key,
		})
		off += n + v
	}
}

// rebase returns the slice of dst at the position s has in src, where s is
// a subslice of src (made by plain slicing, so that the capacity difference
// is its offset) and dst is a copy of src.
func rebase(dst, src, s []byte) []byte {
	if len(s) == 0 {
		return s[:0:0]
	}
	off := cap(src) - cap(s)
	return dst[off : off+len(s) : off+len(s)]
}

// Upgraded hands over the connection after DoStream (or RoundTrip) read a
// 101 (Switching Protocols) response naming its new protocol ("Upgrade"
// and "Connection: upgrade"): reads return the server's bytes, including
// any that arrived with the head, and writes go to the server. The caller
// owns the connection and must Close it. Upgraded returns nil for any
// other response and on later calls; a connection not taken is closed when
// r is reset.
func (r *Response) Upgraded() io.ReadWriteCloser {
	c := r.upgraded
	if c == nil {
		return nil
	}
	r.upgraded = nil
	return &upgradedConn{c: c}
}
