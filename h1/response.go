package h1

import "bytes"

// BodyMode says how a response body is delimited (RFC 9112 §6.3).
type BodyMode uint8

// Body modes.
const (
	BodyNone       BodyMode = iota // no body: HEAD, 1xx, 204, 304, or Content-Length: 0
	BodyLength                     // exactly ContentLength bytes
	BodyChunked                    // chunked transfer coding
	BodyUntilClose                 // everything until the server closes
)

// Response is a parsed response head. All byte slices point into the buffer
// passed to Parse and are valid only while that buffer is. A Response is
// meant to be reused: Parse resets it.
type Response struct {
	Major, Minor int
	Status       int
	Reason       []byte
	Headers      []Header
	// ContentLength is the Content-Length value, or -1 when absent or
	// overridden by Transfer-Encoding.
	ContentLength int64
	// Chunked reports that chunked is the final transfer coding.
	Chunked bool
	// TransferEncoding reports that a Transfer-Encoding field was present.
	TransferEncoding bool
	// UnknownCoding reports that Transfer-Encoding lists a coding other
	// than chunked, which leaves the body coded in a way the codec does not
	// undo.
	UnknownCoding bool
	// Upgrade reports that the response names a protocol to switch to: an
	// Upgrade field and "upgrade" in Connection (RFC 9110 §7.8). With
	// status 101 the connection then carries that protocol.
	Upgrade bool
	// Close reports that the connection must not be reused after this
	// response: the server said it will close it, or the framing (both
	// Transfer-Encoding and Content-Length) makes reuse unsafe. A body
	// delimited by BodyUntilClose also ends the connection.
	Close bool

	inline  [InlineHeaders]Header
	scanned int
	known   [numKnown]uint8
}

// Reset clears r for a new message, keeping any header storage it has grown.
func (r *Response) Reset() {
	hs := r.Headers
	if cap(hs) == 0 {
		hs = r.inline[:0]
	}
	r.Major, r.Minor, r.Status, r.Reason = 0, 0, 0, nil
	r.Headers = hs[:0]
	r.ContentLength, r.Chunked, r.TransferEncoding, r.Close = -1, false, false, false
	r.UnknownCoding, r.Upgrade = false, false
	r.known = [numKnown]uint8{}
	r.scanned = 0
}

// Get returns the value of the first header named name (case-insensitive),
// or nil. It does not allocate.
func (r *Response) Get(name string) []byte { return getHeader(r.Headers, name) }

// Known returns the value of the first header of kind k, or nil.
func (r *Response) Known(k Known) []byte { return knownHeader(r.Headers, &r.known, k) }

// DelKnown removes every field of kind k (not Unknown) from Headers,
// keeping the others in order, as a client does with Content-Encoding and
// Content-Length once it has decoded the body. It does not change the
// framing fields (ContentLength, Chunked...).
func (r *Response) DelKnown(k Known) {
	if k == Unknown {
		return
	}
	n := 0
	for i := range r.Headers {
		if r.Headers[i].Key != k {
			r.Headers[n] = r.Headers[i]
			n++
		}
	}
	clear(r.Headers[n:])
	r.Headers = r.Headers[:n]
	r.known = [numKnown]uint8{}
	for i := range r.Headers {
		if kk := r.Headers[i].Key; kk != Unknown && r.known[kk] == 0 && i < 255 {
			r.known[kk] = uint8(i + 1)
		}
	}
}

// Parse parses a response head at the start of buf, with the same contract
// as Request.Parse. A 1xx response is returned like any other; the caller
// reads the final response after it.
func (r *Response) Parse(buf []byte, lim *Limits) (n int, err error) {
	l := lim.norm()
	end, err := scanHead(buf, &r.scanned, l.MaxHeadBytes, l.MaxRequestLine, ErrHeaderTooLarge)
	if err != nil {
		if err != ErrNeedMore {
			r.scanned = 0
		}
		return 0, err
	}
	r.Reset()
	head := buf[:end]
	for len(head) >= 2 && head[0] == '\r' && head[1] == '\n' {
		head = head[2:]
	}
	eol := bytes.IndexByte(head, '\n')
	if eol-1 > l.MaxRequestLine {
		// Same limit as scanHead applies to an incomplete status line, so the
		// result does not depend on how the bytes arrived.
		return 0, ErrHeaderTooLarge
	}
	if err := r.parseStatusLine(head[:eol-1]); err != nil {
		return 0, err
	}
	if err := parseHeaders(head[eol+1:], &r.Headers, &r.known, &l); err != nil {
		return 0, err
	}
	f, err := scanFraming(r.Headers)
	if f.te && r.Minor == 0 {
		// RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has
		// faulty framing; there is no safe way to find its end.
		return 0, ErrTEOnHTTP10
	}
	if err != nil {
		return 0, err
	}
	r.TransferEncoding = f.te
	r.Chunked = f.chunked
	r.UnknownCoding = f.teUnknown
	r.Upgrade = f.upgrade && r.known[HeaderUpgrade] != 0
	if !f.te {
		r.ContentLength = f.contentLength
	}
	// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, but a
	// message with both may be a smuggling attempt, so the connection is not
	// reused after it.
	r.Close = f.close || (r.Minor == 0 && !f.keepAlive) || (f.te && f.contentLength >= 0)
	return end, nil
}

// parseStatusLine parses HTTP-version SP 3DIGIT SP reason-phrase; a missing
// reason (with or without its SP) is tolerated, as most clients do.
func (r *Response) parseStatusLine(line []byte) error {
	if len(line) < 12 {
		return ErrBadStatusLine
	}
	maj, min, ok := parseVersion(line[:8])
	if !ok || maj != 1 || line[8] != ' ' {
		return ErrBadStatusLine
	}
	r.Major, r.Minor = maj, min
	s := line[9:12]
	if s[0] < '1' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' {
		return ErrBadStatusLine
	}
	r.Status = int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0')
	rest := line[12:]
	if len(rest) > 0 {
		if rest[0] != ' ' {
			return ErrBadStatusLine
		}
		rest = rest[1:]
		for _, c := range rest {
			if !valueTable[c] {
				return ErrBadStatusLine
			}
		}
	}
	r.Reason = rest
	return nil
}

// BodyAllowed reports whether a response with this status may carry a
// body, and so Content-Length or Transfer-Encoding: not 1xx, 204 or 304
// (RFC 9110 §6.4.1, RFC 9112 §6.3). Client and server, HTTP/1.1 and HTTP/2
// all frame by this one rule.
func BodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// BodyMode reports how this response's body is delimited, given whether it
// answers a HEAD request (RFC 9112 §6.3).
func (r *Response) BodyMode(head bool) BodyMode {
	switch {
	case head, !BodyAllowed(r.Status):
		return BodyNone
	case r.TransferEncoding && r.Chunked:
		return BodyChunked
	case r.TransferEncoding:
		return BodyUntilClose
	case r.ContentLength == 0:
		return BodyNone
	case r.ContentLength > 0:
		return BodyLength
	}
	return BodyUntilClose
}
