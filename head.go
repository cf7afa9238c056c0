package riptide

import (
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/clock"
)

// The response head, decided once for every protocol: the handler's
// fields, the fields the server adds (Date, Server, Alt-Svc) and the
// framing. Each wire only encodes an outHead (HTTP/1.1 as lines into the
// connection's buffer, HTTP/2 and HTTP/3 as fields for the stream): a
// response-header rule is added here, not in a wire.

// outHead is a response head as the wires encode it.
type outHead struct {
	status int
	// hdr holds the handler's fields (validated, the server's own ones
	// removed: special).
	hdr *headerFields
	// date: add the server's Date field; server is the Server field's
	// value to add, "" for none.
	date   bool
	server string
	// altSvc is the Alt-Svc to add, nil for none.
	altSvc *altSvc
	// mode is the body's framing, length its Content-Length when mode is
	// h1.BodyLength.
	mode   h1.BodyMode
	length int64
	// trailers: trailer fields are set (so far, while streaming), to
	// follow the body.
	trailers bool
	// close and keepAlive are the HTTP/1.1 connection's fields:
	// "Connection: close" (the connection ends after this response, the
	// HTTP/1.0 close-delimited body's included), or "Connection:
	// keep-alive" for an HTTP/1.0 client whose connection stays.
	close, keepAlive bool
}

// outHead decides the head of the response with status: interim (1xx)
// heads carry the handler's fields only; a final one the server's fields
// and the framing, which h1.BodyFraming decides for every protocol
// (Framed where the protocol delimits bodies itself: an unknown length
// ends with the stream), and on HTTP/1.1 whether the connection stays.
// buffered is the body buffered so far; streaming: more may follow.
func (x *Ctx) outHead(status int, streaming bool, buffered int) outHead {
	r := &x.resp
	h := outHead{status: status, hdr: &r.hdr, length: -1}
	if status < 200 {
		return h
	}
	c := x.conn
	ab := c.ex.abilities()
	h.serverFields(c.srv, ab, r)
	multiplexed := ab&multiplexed != 0
	h.trailers = r.trl.len() > 0
	h.mode, h.length = h1.BodyFraming(h1.Outgoing{
		Status: status, Head: r.head, ContentLength: r.clen,
		Complete: !streaming, Size: int64(buffered), Trailers: h.trailers,
		HTTP10: !multiplexed && x.req.Minor == 0, Framed: multiplexed,
	})
	if !multiplexed {
		// HTTP/1.0 cannot chunk: a body of unknown length ends when the
		// connection does.
		h.close = r.close || c.closeAfter || c.srv.draining.Load() || c.body.undrainable() ||
			h.mode == h1.BodyUntilClose
		h.keepAlive = !h.close && x.req.Minor == 0
	}
	return h
}

// serverFields sets the fields the server adds to a final head, for
// every answer (the canned ones included): Date and Server, and Alt-Svc
// while an HTTP/3 listener runs (h3.go), over TLS only (no browser takes
// an alternative from a cleartext origin; not to a client already on
// HTTP/3); none of them where the handler set its own (r).
func (h *outHead) serverFields(s *Server, ab ability, r *response) {
	h.date = !r.userDate
	if s.addsServerHeader(r.userServer) {
		h.server = s.Name
	}
	if ab&(onQUIC|overTLS) == overTLS && !r.userAltSvc {
		h.altSvc = s.h3state.altSvc.Load()
	}
}

// noUserFields is a response whose handler set none of the server's
// fields: a canned answer's.
var noUserFields response

// contentLengthValue is the rule for a Content-Length a handler sets, on
// either door and every protocol: 1 to 18 ASCII digits (RFC 9110 §8.6:
// 1*DIGIT), no sign, no space. A value that is not one declares no
// length: the native door answers 500 (an invalid header), the compat
// door drops it, as net/http's HTTP/2 server does (strconv.ParseUint),
// and frames the body itself.
func contentLengthValue[V ~string | ~[]byte](v V) (int64, bool) { return ascii.ParseLength(v) }

// transferEncodingRules reports what a Transfer-Encoding set by a compat
// handler still does (the engine frames every body itself and never sends
// the handler's): on HTTP/1.1, as net/http there, it overrides a
// Content-Length and stops Content-Type sniffing; on a stream of HTTP/2
// or HTTP/3 it is a connection-specific field, dropped with no effect, as
// net/http's HTTP/2 server and quic-go drop it (RFC 9113 §8.2.2).
func transferEncodingRules(ab ability) bool { return ab&multiplexed == 0 }

// appendServerLines appends the fields the server adds to h as HTTP/1.1
// header lines: Date, Server, Alt-Svc.
func (c *conn) appendServerLines(w []byte, h *outHead) []byte {
	if h.date {
		w = append(w, c.date.Get()...)
	}
	if h.server != "" {
		w = append(w, c.cfg.serverHeader...)
	}
	if h.altSvc != nil {
		w = append(w, h.altSvc.line...)
	}
	return w
}

// appendHeadFields appends h's fields as a stream's field list: the
// handler's, then Date, Server and Alt-Svc (lower case). field makes one
// of the protocol's fields; view says the name and value are views of the
// Ctx's buffers, which the encoder must copy to keep. The Content-Length
// is the wire's to add, from h.mode and h.length.
func appendHeadFields[F any](dst []F, h *outHead, field func(name, value string, view bool) F) []F {
	dst = appendFields(dst, h.hdr, false, field)
	if h.date {
		dst = append(dst, field("date", clock.Value(), false))
	}
	if h.server != "" {
		dst = append(dst, field("server", h.server, false))
	}
	if h.altSvc != nil {
		dst = append(dst, field("alt-svc", h.altSvc.value, false))
	}
	return dst
}

// appendFields appends the fields of hf as views of its buffer; for
// trailers, without those RFC 9110 §6.5.1 forbids (framing, routing,
// authentication, controls), should one have been set.
func appendFields[F any](dst []F, hf *headerFields, trailers bool, field func(name, value string, view bool) F) []F {
	for _, a := range hf.at {
		name := bytesView(hf.buf[a.name:a.value])
		if trailers && forbiddenTrailer(name) {
			continue
		}
		dst = append(dst, field(name, bytesView(hf.buf[a.value:a.end]), true))
	}
	return dst
}

// bytesView views b as a string, for as long as b is not changed.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
