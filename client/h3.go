package client

// The HTTP/3 seam: the client package never imports a QUIC stack. A
// Client with HTTP3 set hands requests to an HTTP3Transport (package
// github.com/riptide-http/riptide/http3 implements one on quic-go) through
// an HTTP3Exchange, which shows the transport the request and lets it fill
// the response; framing limits, gzip, body limits, RoundTrip's conversion
// and the Alt-Svc cache stay here.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// HTTP3Transport carries a Client's requests over HTTP/3 (see HTTP3).
type HTTP3Transport interface {
	// RoundTripHTTP3 sends x's request to addr (host:port, over UDP): the
	// origin itself or its alternative service. It returns once x's
	// response head is filled (SetStatus, AddHeader) and its body handed
	// over (SetBody), or with an error. An error wrapping
	// ErrHTTP3Unreachable means that nothing of the request reached the
	// server (no connection could be made), so that the client may fall
	// back to TCP.
	RoundTripHTTP3(ctx context.Context, addr string, x *HTTP3Exchange) error
	// CloseIdleConnections closes the connections that carry no request.
	CloseIdleConnections()
}

// HTTP3Body is the body of an HTTP/3 response, read by the client.
type HTTP3Body interface {
	// Read reads body bytes; io.EOF once the body ended (after its
	// trailers arrived).
	Read(p []byte) (int, error)
	// Close abandons a body not read to its end (its stream is reset)
	// or releases one that was.
	Close() error
	// Trailers returns the response trailers once Read returned io.EOF.
	// The fields are valid until Close.
	Trailers() []h1.Header
}

// ErrHTTP3Unreachable is wrapped by an HTTP3Transport's error when no
// connection to the HTTP/3 server could be made (nothing of the request
// was sent).
var ErrHTTP3Unreachable = errors.New("client: HTTP/3 server unreachable")

// ErrHTTP3Proxy fails the requests of a Client with HTTP3.Always whose
// origin is reached through a proxy (Proxy, ProxyFunc): HTTP/3 cannot go
// through one, and the client does not go around it. Without Always, a
// proxied origin simply stays on TCP.
var ErrHTTP3Proxy = errors.New("client: HTTP/3 cannot be sent through a proxy")

// Defaults of HTTP3's fields.
const (
	DefaultAltSvcBrokenTimeout = 5 * time.Minute
	DefaultAltSvcMaxEntries    = 1024
)

// HTTP3 configures a Client's use of HTTP/3 through an HTTP3Transport.
//
// Without Always, it is an Alt-Svc cache (RFC 7838): when a response over
// TLS (HTTP/1.1 or HTTP/2) carries "Alt-Svc: h3=...", the origin's later
// requests go over HTTP/3 to the alternative it names, for as long as its
// ma= parameter says (24 hours by default); "Alt-Svc: clear" forgets it. An
// alternative that cannot be reached is marked broken for BrokenTimeout and
// the request, and those that follow, go over TCP. Requests to http
// origins, and to origins reached through a proxy, never use HTTP/3.
//
// An HTTP3 must not be shared by Clients, nor changed after the first
// request.
type HTTP3 struct {
	// Transport speaks HTTP/3. Required.
	Transport HTTP3Transport
	// Always sends every https request over HTTP/3 to its own host and
	// port, with no Alt-Svc and no fallback to TCP; an http request then
	// fails with ErrBadURL. package http3's Client sets it.
	Always bool
	// BrokenTimeout is how long an alternative that could not be reached
	// is left unused. 0: DefaultAltSvcBrokenTimeout.
	BrokenTimeout time.Duration
	// MaxEntries bounds the origins remembered; a new one past it evicts
	// an expired entry or, failing that, is not remembered. 0:
	// DefaultAltSvcMaxEntries.
	MaxEntries int

	mu   sync.Mutex
	alts map[*hostPool]*altEntry // by origin
}

// altEntry is the HTTP/3 alternative of an origin.
type altEntry struct {
	addr    string    // host:port to dial
	raw     string    // the Alt-Svc value it came from
	expires time.Time // ma
	broken  time.Time // not used before
}

// route returns the address to send an https request of p over HTTP/3,
// if it has one.
func (h *HTTP3) route(p *hostPool) (string, bool) {
	if h.Always {
		return p.addr, true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.alts[p]
	if e == nil {
		return "", false
	}
	now := time.Now()
	if now.After(e.expires) {
		delete(h.alts, p)
		return "", false
	}
	if now.Before(e.broken) {
		return "", false
	}
	return e.addr, true
}

// markBroken keeps p's alternative unused for BrokenTimeout.
func (h *HTTP3) markBroken(p *hostPool) {
	d := h.BrokenTimeout
	if d <= 0 {
		d = DefaultAltSvcBrokenTimeout
	}
	h.mu.Lock()
	if e := h.alts[p]; e != nil {
		e.broken = time.Now().Add(d)
	}
	h.mu.Unlock()
}

// observe updates p's entry from the Alt-Svc value v of a response
// received over TLS.
func (h *HTTP3) observe(p *hostPool, v []byte) {
	if h.Always || len(v) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.alts[p]
	if e != nil && e.raw == string(v) {
		return // the same offer again: nothing to parse, nothing allocated
	}
	addr, ma, clear, ok := parseAltSvc(string(v), p.hostname)
	switch {
	case clear:
		delete(h.alts, p)
		return
	case !ok:
		return
	}
	if e == nil {
		if !h.room() {
			return
		}
		e = new(altEntry)
		if h.alts == nil {
			h.alts = make(map[*hostPool]*altEntry)
		}
		h.alts[p] = e
	}
	e.addr, e.raw, e.expires = addr, string(v), time.Now().Add(ma)
}

// room reports whether the cache may take another origin, evicting an
// expired one if it must.
func (h *HTTP3) room() bool {
	max := h.MaxEntries
	if max <= 0 {
		max = DefaultAltSvcMaxEntries
	}
	if len(h.alts) < max {
		return true
	}
	now := time.Now()
	for k, e := range h.alts {
		if now.After(e.expires) {
			delete(h.alts, k)
			return true
		}
	}
	return false
}

// parseAltSvc finds the first "h3" alternative in an Alt-Svc field value
// (RFC 7838 §3): its address (the origin's host when the alt-authority
// names none) and max age (ma, 24 hours by default), or clear.
func parseAltSvc(v, host string) (addr string, ma time.Duration, clear, ok bool) {
	if strings.TrimSpace(v) == "clear" {
		return "", 0, true, false
	}
	for alt := range strings.SplitSeq(v, ",") {
		params := strings.Split(alt, ";")
		proto, auth, found := strings.Cut(strings.TrimSpace(params[0]), "=")
		if !found || proto != "h3" {
			continue
		}
		auth, err := strconv.Unquote(strings.TrimSpace(auth))
		if err != nil {
			continue
		}
		ahost, port, err := net.SplitHostPort(auth)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			continue
		}
		if ahost == "" {
			ahost = host
		}
		addr = net.JoinHostPort(ahost, port)
		if !ascii.ValidAuthority(addr, false) {
			continue
		}
		ma = 24 * time.Hour
		for _, p := range params[1:] {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "ma" {
				if s, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(val), `"`), 10, 32); err == nil {
					ma = time.Duration(s) * time.Second
				}
			}
		}
		return addr, ma, false, true
	}
	return "", 0, false, false
}

// HTTP3Exchange is one request a Client hands to its HTTP3Transport, and
// the response the transport fills. It is valid only during
// RoundTripHTTP3; the slices it returns must not be modified.
type HTTP3Exchange struct {
	req      *Request
	resp     *Response
	cl       *Client
	deadline time.Time
	hdr      time.Time
	body     HTTP3Body
	tls      *tls.ConnectionState
	host     string
	num      [20]byte
}

// ServerName returns the origin's host name, for TLS (SNI and the
// certificate check): an alternative service still proves the origin.
func (x *HTTP3Exchange) ServerName() string { return x.host }

// Method returns the request method.
func (x *HTTP3Exchange) Method() []byte { return x.req.Method() }

// Authority returns the :authority to send (the Host override, or the
// URL's authority).
func (x *HTTP3Exchange) Authority() []byte { return x.req.hostHeader() }

// Path returns the :path to send (path and query).
func (x *HTTP3Exchange) Path() []byte { return x.req.uri }

// Fields calls fn for each regular request field to send, in order: those
// of the request less the connection-specific ones (a TE other than
// "trailers" included), then the client's User-Agent and
// Accept-Encoding, content-length for a body of known size and trailer
// for announced trailers. Names may be in any case.
func (x *HTTP3Exchange) Fields(fn func(name, value []byte)) {
	req, cl := x.req, x.cl
	for rest := req.hdrs; len(rest) > 0; {
		eol := strings.IndexByte(unsafe.String(unsafe.SliceData(rest), len(rest)), '\n')
		line := rest[:eol-1]
		rest = rest[eol+1:]
		colon := strings.IndexByte(unsafe.String(unsafe.SliceData(line), len(line)), ':')
		name, value := line[:colon], line[colon+2:]
		if h1.ConnectionSpecific(name) || h1.EqualFold(name, "te") && !h1.EqualFold(value, "trailers") {
			continue
		}
		fn(name, value)
	}
	if cl.UserAgent != "" && !req.hasUA {
		fn(sb("user-agent"), sb(cl.UserAgent))
	}
	if cl.Gzip && !req.hasAE && !isHeadMethod(req.Method()) {
		fn(sb("accept-encoding"), sb("gzip"))
	}
	if mode, n := h1.BodyFraming(req.outgoing()); mode == h1.BodyLength && (n > 0 || req.bodyStream != nil || methodWithBody(req.Method())) {
		fn(sb("content-length"), strconv.AppendInt(x.num[:0], n, 10))
	}
	if req.trailer != nil {
		v := appendTrailerField(nil, req.trailer) // "Trailer: a,b\r\n"
		fn(sb("trailer"), v[len("Trailer: "):len(v)-2])
	}
}

// methodWithBody reports the methods whose empty body is announced with
// content-length: 0, as net/http does.
func methodWithBody(m []byte) bool {
	switch string(m) {
	case "POST", "PUT", "PATCH":
		return true
	}
	return false
}

// Body returns the request body set as bytes.
func (x *HTTP3Exchange) Body() []byte { return x.req.body }

// BodyStream returns the request body set as a stream and its size (-1:
// unknown), or nil. The transport reads it only as fast as the stream's
// flow control allows.
func (x *HTTP3Exchange) BodyStream() (io.Reader, int64) {
	return x.req.bodyStream, x.req.bodySize
}

// Trailer returns the request trailers to send after the body (RoundTrip's
// http.Request.Trailer, whose values are final once the body stream
// returned io.EOF), or nil.
func (x *HTTP3Exchange) Trailer() http.Header { return x.req.trailer }

// Deadline returns when the whole exchange must end (Client.Timeout and
// the context's deadline), zero for none.
func (x *HTTP3Exchange) Deadline() time.Time { return x.deadline }

// HeaderDeadline returns when the response head must have arrived
// (Client.ResponseHeaderTimeout), zero for none.
func (x *HTTP3Exchange) HeaderDeadline() time.Time { return x.hdr }

// SetStatus sets the response status.
func (x *HTTP3Exchange) SetStatus(code int) { x.resp.head.Status = code }

// AddHeader adds a response field, copied. The transport has validated it.
func (x *HTTP3Exchange) AddHeader(name, value []byte) {
	r := x.resp
	name, value = r.store(name, value)
	r.head.Headers = append(r.head.Headers, h1.Header{Name: name, Value: value, Key: h1.Lookup(name)})
}

// store copies name and value into r.raw, rebasing the head's slices if
// raw moved, and returns the copies.
func (r *Response) store(name, value []byte) ([]byte, []byte) {
	old := r.raw
	start := len(old)
	raw := append(old, name...)
	raw = append(raw, value...)
	if unsafe.SliceData(raw) != unsafe.SliceData(old) && start > 0 {
		h := &r.head
		for i := range h.Headers {
			h.Headers[i].Name = rebaseOpen(raw, old, h.Headers[i].Name)
			h.Headers[i].Value = rebaseOpen(raw, old, h.Headers[i].Value)
		}
	}
	r.raw = raw
	n := len(name)
	// Plain slicing: rebase finds the offset from the capacity.
	return raw[start : start+n], raw[start+n:]
}

// rebaseOpen is rebase keeping the capacity to the end of dst, so that
// the slice can be rebased again.
func rebaseOpen(dst, src, s []byte) []byte {
	off := cap(src) - cap(s)
	return dst[off : off+len(s)]
}

// SetBody hands the response body over; the client reads and closes it.
func (x *HTTP3Exchange) SetBody(b HTTP3Body) { x.body = b }

// SetTLS records the connection's TLS state (RoundTrip's
// http.Response.TLS).
func (x *HTTP3Exchange) SetTLS(s *tls.ConnectionState) { x.tls = s }

// exchangeHTTP3 sends req over HTTP/3 if c.HTTP3 routes it there. done
// reports that it did (err is then the outcome); otherwise the request
// goes over TCP.
func (c *Client) exchangeHTTP3(ctx context.Context, p *hostPool, req *Request, resp *Response, deadline time.Time, stream bool) (done bool, ts *tls.ConnectionState, err error) {
	h := c.HTTP3
	if !p.https {
		if h.Always {
			return true, nil, ErrBadURL
		}
		return false, nil, nil
	}
	if p.proxy != nil || p.socks != nil || p.proxyErr != nil {
		// QUIC cannot go through the proxy: never around it.
		if h.Always {
			return true, nil, ErrHTTP3Proxy
		}
		return false, nil, nil
	}
	addr, ok := h.route(p)
	if !ok {
		return false, nil, nil
	}
	x := resp.h3
	if x == nil {
		x = new(HTTP3Exchange)
		resp.h3 = x
	}
	*x = HTTP3Exchange{req: req, resp: resp, cl: c, deadline: deadline, host: p.hostname}
	if c.ResponseHeaderTimeout > 0 {
		x.hdr = time.Now().Add(c.ResponseHeaderTimeout)
	}
	resp.maxBody = c.bodyLimit(stream)
	err = h.Transport.RoundTripHTTP3(ctx, addr, x)
	body := x.body
	ts = x.tls
	*x = HTTP3Exchange{}
	if err != nil {
		if body != nil {
			body.Close()
		}
		if !h.Always && errors.Is(err, ErrHTTP3Unreachable) && ctx.Err() == nil {
			h.markBroken(p)
			resp.Reset()
			return false, nil, nil
		}
		return true, nil, err
	}
	resp.finishHTTP3()
	resp.br = bodyReader{h3: body, mode: h1.BodyUntilClose, max: resp.maxBody, sink: resp}
	if stream {
		resp.stream = true
		return true, ts, nil
	}
	resp.body, err = resp.br.readAll(resp.body[:0])
	if err != nil {
		return true, nil, err
	}
	if c.Gzip && !req.hasAE && !isHeadMethod(req.Method()) {
		err = resp.gunzip()
	}
	return true, ts, err
}

// finishHTTP3 completes a head an HTTP3Transport filled.
func (r *Response) finishHTTP3() {
	h := &r.head
	h.Major, h.Minor = 3, 0
	_, reason := r.store(nil, sb(h1.StatusText(h.Status)))
	h.Reason = reason
	// Transfer-Encoding is connection-specific (the transport refuses
	// it); dropping it indexes the known fields.
	h.DelKnown(h1.HeaderTransferEncoding)
	h.ContentLength = -1
	if v := h.Known(h1.HeaderContentLength); v != nil {
		if n, ok := parseLength(v); ok {
			h.ContentLength = n
		}
	}
}

// readH3 is bodyReader.Read for an HTTP/3 response.
func (b *bodyReader) readH3(p []byte) (int, error) {
	if b.done || len(p) == 0 {
		return b.ended()
	}
	n, err := b.h3.Read(p)
	b.n += int64(n)
	if b.max > 0 && b.n > b.max {
		b.finishH3(ErrBodyTooLarge)
		return 0, ErrBodyTooLarge
	}
	if err == io.EOF {
		if ts := b.h3.Trailers(); len(ts) > 0 && b.sink != nil {
			b.sink.setTrailers(ts)
		}
		b.finishH3(nil)
		return n, io.EOF
	}
	if err != nil {
		b.finishH3(err)
	}
	return n, err
}

// finishH3 ends an HTTP/3 body once.
func (b *bodyReader) finishH3(err error) {
	if b.done {
		return
	}
	b.done, b.err = true, err
	b.h3.Close()
}

// observeAltSvc feeds the cache with the Alt-Svc field of a response
// received over TLS.
func (c *Client) observeAltSvc(p *hostPool, resp *Response) {
	if h := c.HTTP3; h != nil && p.https && !h.Always {
		if v := resp.head.Get("Alt-Svc"); v != nil {
			h.observe(p, v)
		}
	}
}
