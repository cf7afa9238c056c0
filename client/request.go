package client

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// Request is an outgoing request for Client.Do and Client.DoStream.
//
// A Request is owned by the caller and meant to be reused: Reset it (or
// overwrite its fields with the setters) and send it again, and the client
// allocates nothing for it. Every setter copies its arguments into storage
// the Request keeps across Resets, so the caller may reuse its own buffers as
// soon as a setter returns.
//
// A Request must not be modified while a Do or DoStream call using it is in
// progress. It may be reused as soon as Do returns, or, for DoStream, once
// the call has returned (the request has then been sent in full). A Request
// is not safe for concurrent use; give each goroutine its own.
type Request struct {
	method []byte
	https  bool
	host   []byte // authority from the URL, as given
	uri    []byte // request-target in origin form: path ["?" query]
	key    []byte // pool key: scheme "://" authority
	hostHd []byte // Host header override; nil means host
	hdrs   []byte // serialized "Name: Value\r\n" lines
	body   []byte

	bodyStream io.Reader
	bodySize   int64
	// trailer holds the request trailers of a RoundTrip request sent
	// chunked: the values are read when the body has reached io.EOF.
	trailer http.Header
	// bodyCloser is RoundTrip's request body, closed once sent (over
	// HTTP/2, by the goroutine that sends it).
	bodyCloser io.Closer
	bodyTaken  bool // a sender goroutine took bodyCloser

	close     bool
	expect100 bool
	hasUA     bool
	hasAE     bool
	idemKey   bool
	urlErr    error // from SetURL; cleared by the next SetURL
	hdrErr    error // from a header setter; cleared only by Reset

	// pool caches the host pool the key resolved to, so a reused Request
	// skips the map lookup. It is cleared whenever the URL changes.
	pool *hostPool
}

// Reset clears r for a new request, keeping the storage it has grown.
func (r *Request) Reset() {
	r.method = r.method[:0]
	r.https = false
	r.host, r.uri, r.key = r.host[:0], r.uri[:0], r.key[:0]
	r.hostHd = nil
	r.hdrs = r.hdrs[:0]
	r.body = r.body[:0]
	r.bodyStream, r.bodySize = nil, 0
	r.trailer = nil
	r.bodyCloser, r.bodyTaken = nil, false
	r.close, r.expect100, r.hasUA, r.hasAE, r.idemKey = false, false, false, false, false
	r.urlErr, r.hdrErr = nil, nil
	r.pool = nil
}

// SetMethod sets the request method. The default is GET.
func (r *Request) SetMethod(m string) { r.method = append(r.method[:0], m...) }

// Method returns the request method ("GET" when none was set). The slice is
// valid until the method is changed.
func (r *Request) Method() []byte {
	if len(r.method) == 0 {
		return methodGet
	}
	return r.method
}

var methodGet = []byte("GET")

// SetURL sets the target from an absolute URL: "http" or "https" scheme, a
// host with an optional port, and an optional path and query. The fragment
// is dropped; the path is sent as given (escape it beforehand). An invalid
// URL is reported by SetURL and again by Do.
func (r *Request) SetURL(u string) error {
	r.pool = nil
	r.urlErr = nil
	var rest string
	switch {
	case len(u) >= 7 && strings.EqualFold(u[:7], "http://"):
		r.https, rest = false, u[7:]
	case len(u) >= 8 && strings.EqualFold(u[:8], "https://"):
		r.https, rest = true, u[8:]
	default:
		r.urlErr = ErrBadURL
		return ErrBadURL
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if strings.IndexByte(auth, '@') >= 0 || !ascii.ValidAuthority(auth, false) {
		r.urlErr = ErrBadURL
		return ErrBadURL
	}
	r.host = append(r.host[:0], auth...)
	r.uri = r.uri[:0]
	if end == len(rest) || rest[end] == '?' {
		r.uri = append(r.uri, '/')
	}
	r.uri = append(r.uri, rest[end:]...)
	if !validTarget(r.uri) {
		r.urlErr = ErrBadURL
		return ErrBadURL
	}
	r.setKey()
	return nil
}

func (r *Request) setKey() {
	if r.https {
		r.key = append(r.key[:0], "https://"...)
	} else {
		r.key = append(r.key[:0], "http://"...)
	}
	r.key = append(r.key, r.host...)
}

// validTarget reports whether t may be sent as a request-target: visible
// ASCII only.
func validTarget(t []byte) bool {
	for _, c := range t {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return len(t) > 0
}

// SetHost overrides the Host header (by default the URL's authority). TLS
// server name verification and SNI still use the URL's host, as in net/http.
// A value that is not a valid authority (a control byte, a space, or any
// other byte a host and port cannot hold) is not stored and makes Do fail
// with ErrBadHeader.
func (r *Request) SetHost(host string) {
	if !validHostHeader(host) {
		r.hdrErr = ErrBadHeader
		return
	}
	r.hostHd = append(r.hostHd[:0], host...)
}

// validHostHeader reports whether v may be sent as a Host value: empty, or
// made of the bytes of an RFC 3986 authority without user info
// (reg-name or IP literal, and port).
func validHostHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:%[]", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// check reports why r cannot be sent, if it cannot: a bad URL, a header
// that was refused, or a method that is not a token. It runs before a
// connection is taken, so that nothing of a bad request is written.
func (r *Request) check() error {
	if r.urlErr != nil {
		return r.urlErr
	}
	if r.hdrErr != nil {
		return r.hdrErr
	}
	if !h1.IsToken(r.Method()) {
		return ErrBadMethod
	}
	return nil
}

// AddHeader appends a header field. Host, Content-Length and
// Transfer-Encoding are managed by the client: Host goes to SetHost, the
// other two are ignored (the body setters decide the framing).
// "Connection: close" makes the connection close after the response;
// "Expect: 100-continue" makes the client wait for the server's interim
// response (up to Client.ExpectContinueTimeout) before sending the body.
// A name or value that may not be sent (see h1.ValidHeaderName and
// h1.ValidHeaderValue) is dropped and reported by Do as ErrBadHeader.
func (r *Request) AddHeader(name, value string) {
	if !h1.ValidHeaderName(name) || !h1.ValidHeaderValue(value) {
		r.hdrErr = ErrBadHeader
		return
	}
	switch {
	case strings.EqualFold(name, "Host"):
		r.SetHost(value)
		return
	case strings.EqualFold(name, "Content-Length"), strings.EqualFold(name, "Transfer-Encoding"):
		return
	case strings.EqualFold(name, "Connection"):
		if ascii.HasToken(value, "close") {
			r.close = true
			if strings.EqualFold(strings.TrimSpace(value), "close") {
				return // written by the client, once
			}
		}
	case strings.EqualFold(name, "Expect"):
		if strings.EqualFold(strings.TrimSpace(value), "100-continue") {
			r.expect100 = true
			return
		}
	case strings.EqualFold(name, "User-Agent"):
		r.hasUA = true
	case strings.EqualFold(name, "Accept-Encoding"):
		r.hasAE = true
	case strings.EqualFold(name, "Idempotency-Key"), strings.EqualFold(name, "X-Idempotency-Key"):
		r.idemKey = true
	}
	r.hdrs = h1.AppendHeader(r.hdrs, name, value)
}

// Header returns the value of the first added header named name
// (case-insensitive), or nil. The slice is valid until r is modified.
func (r *Request) Header(name string) []byte {
	for rest := r.hdrs; len(rest) > 0; {
		eol := bytes.IndexByte(rest, '\n')
		line := rest[:eol-1]
		rest = rest[eol+1:]
		colon := bytes.IndexByte(line, ':')
		if h1.EqualFold(line[:colon], name) {
			return line[colon+2:]
		}
	}
	return nil
}

// SetClose asks for the connection to be closed after this exchange.
func (r *Request) SetClose(close bool) { r.close = close }

// SetBody sets the request body, copied into r; Content-Length is sent.
// It replaces any body stream.
func (r *Request) SetBody(b []byte) {
	r.body = append(r.body[:0], b...)
	r.bodyStream, r.bodySize = nil, int64(len(b))
}

// SetBodyString is SetBody for a string.
func (r *Request) SetBodyString(s string) {
	r.body = append(r.body[:0], s...)
	r.bodyStream, r.bodySize = nil, int64(len(s))
}

// SetBodyStream sets a body read from rd while the request is sent. With
// size >= 0, exactly size bytes are sent with Content-Length (fewer is
// ErrBodyLength); with size < 0 the body is sent chunked until rd returns
// io.EOF. The client reads rd only as fast as the connection accepts the
// data. A request with a body stream is not retried. If rd is an io.Closer
// the client does not close it. Over HTTP/2 the body is sent while the
// response is read (full duplex): DoStream may return, with the response
// head, before rd was read to its end, and the client goes on reading rd
// until it ends or the response does.
func (r *Request) SetBodyStream(rd io.Reader, size int64) {
	r.body = r.body[:0]
	r.bodyStream, r.bodySize = rd, size
}

// Body returns the body set by SetBody. The slice is valid until r is
// modified.
func (r *Request) Body() []byte { return r.body }

// hostHeader returns the Host header value to send.
func (r *Request) hostHeader() []byte {
	if r.hostHd != nil {
		return r.hostHd
	}
	return r.host
}

// idempotent reports whether r may be sent again after a failure on a
// reused connection (RFC 9110 §9.2.2), given that its body can be replayed.
func (r *Request) idempotent() bool {
	if r.bodyStream != nil {
		return false
	}
	if r.idemKey {
		return true
	}
	return isIdempotent(r.Method())
}

func isIdempotent[T ~string | ~[]byte](m T) bool {
	switch string(m) {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

func isHeadMethod[T ~string | ~[]byte](m T) bool { return string(m) == "HEAD" }
