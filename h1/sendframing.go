package h1

// Outgoing describes a message about to be sent, for BodyFraming: what the
// sender knows of its body when the head goes out.
type Outgoing struct {
	// Status is a response's status code; 0 marks a request.
	Status int
	// Head marks a response to a HEAD request: it carries no body, but a
	// Content-Length it declares, or that its buffered body shows,
	// describes the body a GET would get.
	Head bool
	// Method is a request's method: POST, PUT and PATCH announce an empty
	// body as "Content-Length: 0", as servers may answer 411 otherwise
	// (RFC 9110 §8.6). Unused for a response.
	Method []byte
	// ContentLength is the length the sender declared, -1 for none. It
	// wins over everything but a status that allows no body.
	ContentLength int64
	// Complete reports that the whole body is known (buffered) when the
	// head is written, and Size is its length.
	Complete bool
	Size     int64
	// Trailers reports trailer fields to send after the body: on HTTP/1.1
	// they need chunked framing even when the body is complete.
	Trailers bool
	// HTTP10 marks a response to an HTTP/1.0 request: HTTP/1.0 cannot
	// receive chunked, so an undeclared streamed body ends with the
	// connection (and trailers are dropped). The zero value is HTTP/1.1;
	// unused for a request (the client speaks HTTP/1.1).
	HTTP10 bool
	// Framed marks a protocol that delimits bodies itself (HTTP/2,
	// HTTP/3): never chunked; an unknown length ends with the stream, and
	// HTTP10 and Trailers do not matter.
	Framed bool
}

// BodyFraming decides how an outgoing message's body is delimited, one rule
// for client and server, HTTP/1.1 and HTTP/2 (as net/http's transfer
// writer serves both sides). It returns the mode and, for BodyLength, the
// Content-Length to send:
//   - BodyNone: no framing field. The status allows no body (1xx, 204,
//     304: no Content-Length either, RFC 9110 §8.6), a HEAD response with
//     nothing to describe, or a request with no body whose method does not
//     want "Content-Length: 0".
//   - BodyLength: "Content-Length: n".
//   - BodyChunked: "Transfer-Encoding: chunked" (HTTP/1.1 only).
//   - BodyUntilClose: no framing field; the body ends when the stream does
//     (Framed) or, on HTTP/1.0, when the connection does, so the sender
//     closes it after the body.
func BodyFraming(m Outgoing) (BodyMode, int64) {
	http10 := m.HTTP10 && m.Status != 0
	switch {
	case m.Status != 0 && !BodyAllowed(m.Status):
		return BodyNone, 0
	case m.ContentLength >= 0:
		return BodyLength, m.ContentLength
	case m.Complete && (!m.Trailers || m.Framed || http10):
		if m.Size > 0 || (m.Status != 0 && !m.Head) || (m.Status == 0 && lengthWhenEmpty(m.Method)) {
			return BodyLength, m.Size
		}
		return BodyNone, 0
	case m.Head:
		// A streamed HEAD response: no body, so no framing to announce.
		return BodyNone, 0
	case m.Framed || http10:
		return BodyUntilClose, 0
	default:
		return BodyChunked, 0
	}
}

// lengthWhenEmpty reports methods that are sent with "Content-Length: 0"
// when they have no body.
func lengthWhenEmpty(m []byte) bool {
	switch string(m) {
	case "POST", "PUT", "PATCH":
		return true
	}
	return false
}
