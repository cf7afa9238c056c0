package client

import (
	"compress/gzip"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// rtState is the per-call scratch space of RoundTrip: the request is
// serialised through a native Request and the head parsed into a native
// Response, both reused through a sync.Pool.
type rtState struct {
	req  Request
	resp Response
}

var rtStates = sync.Pool{New: func() any { return new(rtState) }}

const defaultUserAgent = "Go-http-client/1.1"

// RoundTrip implements http.RoundTripper, so that a *Client can be the
// Transport of an http.Client:
//
//	hc := &http.Client{Transport: &client.Client{}}
//
// It follows net/http's Transport contract: it honours req.Context (which
// cancels the exchange, including reading the body), req.Close (the
// connection is closed after the response), "Expect: 100-continue" (the
// body waits for the interim response up to ExpectContinueTimeout), and
// closes req.Body, even on errors. The response body must be read to EOF or
// closed; reaching EOF returns the connection to the pool at once, closing
// an unfinished body closes the connection. Response trailers are in
// resp.Trailer once the body has returned io.EOF. Unless DisableCompression
// is set, gzip is requested and transparently decoded as net/http does.
// Redirects are returned, not followed; http.Client follows them. Request
// trailers (req.Trailer) are sent after a body of unknown length, which
// goes chunked, with the values the map holds once req.Body has returned
// io.EOF; as in net/http, they are dropped when ContentLength is known.
// Over HTTP/2 the request body is sent while the response is read (full
// duplex): RoundTrip may return before req.Body was read to its end, and
// closes it when sending ends. Interim (1xx) responses are passed to the
// httptrace.ClientTrace of req's context (Got1xxResponse, Got100Continue).
func (c *Client) RoundTrip(req *http.Request) (*http.Response, error) {
	st := rtStates.Get().(*rtState)
	defer rtStates.Put(st)
	resp, err := c.roundTrip(req, st)
	if err != nil && req.Body != nil && !st.req.bodyTaken {
		req.Body.Close()
	}
	return resp, err
}

func (c *Client) roundTrip(hreq *http.Request, st *rtState) (*http.Response, error) {
	u := hreq.URL
	if u == nil {
		return nil, ErrBadURL
	}
	ctx := hreq.Context()
	r := &st.req
	r.Reset()
	gz, err := c.fillRequest(r, hreq)
	if err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	p, err := c.poolFor(r)
	if err != nil {
		return nil, err
	}
	deadline := c.deadline(ctx)
	if c.HTTP3 != nil {
		st.resp.Reset()
		if done, ts, err := c.exchangeHTTP3(ctx, p, r, &st.resp, deadline, true); done {
			if err != nil {
				return nil, err
			}
			if r.bodyStream != nil {
				hreq.Body.Close()
			}
			return c.toHTTPResponse(hreq, &st.resp, ts, gz), nil
		}
	}
	for attempt := 0; ; attempt++ {
		retryable := attempt < c.maxRetries() && replayable(hreq)
		cn, hc, err := p.acquire(ctx, deadline)
		if err != nil {
			return nil, err
		}
		st.resp.Reset()
		if hc != nil {
			err := c.h2Exchange(ctx, p, hc, r, &st.resp, deadline, true)
			if err != nil {
				return nil, err
			}
			if r.bodyCloser != nil {
				// Not taken by a sender goroutine (see sendRequestBody):
				// sent, or not to be sent after Expect: 100-continue.
				r.bodyCloser.Close()
			}
			c.observeAltSvc(p, &st.resp)
			return c.toHTTPResponse(hreq, &st.resp, hc.tls, gz), nil
		}
		retry, err := cn.exchange(ctx, r, &st.resp, deadline, true)
		if err == nil {
			if r.bodyStream != nil {
				hreq.Body.Close()
			}
			c.observeAltSvc(p, &st.resp)
			return c.toHTTPResponse(hreq, &st.resp, cn.tls, gz), nil
		}
		if err == errNotQuiet {
			attempt-- // nothing was sent (see Client.do)
			continue
		}
		if !retry || !retryable || ctx.Err() != nil {
			return nil, err
		}
		if r.bodyStream != nil {
			hreq.Body.Close()
			b, gerr := hreq.GetBody()
			if gerr != nil {
				return nil, err
			}
			hreq.Body = b
			r.bodyStream, r.bodyCloser = b, b
		}
	}
}

// replayable reports whether hreq may be sent again after a reused
// connection failed before the response began.
func replayable(hreq *http.Request) bool {
	if hreq.Body != nil && hreq.Body != http.NoBody && hreq.GetBody == nil {
		return false
	}
	if isIdempotent(hreq.Method) || hreq.Method == "" {
		return true
	}
	_, a := hreq.Header["Idempotency-Key"]
	_, b := hreq.Header["X-Idempotency-Key"]
	return a || b
}

// fillRequest serialises hreq's target, headers and body into r. It reports
// whether transparent gzip was requested.
func (c *Client) fillRequest(r *Request, hreq *http.Request) (gz bool, err error) {
	u := hreq.URL
	switch u.Scheme {
	case "http":
	case "https":
		r.https = true
	default:
		return false, ErrBadURL
	}
	if !ascii.ValidAuthority(u.Host, false) {
		return false, ErrBadURL
	}
	r.host = append(r.host[:0], u.Host...)
	r.setKey()
	r.uri = appendRequestURI(r.uri[:0], u)
	if !validTarget(r.uri) {
		return false, ErrBadURL
	}
	if hreq.Method != "" {
		r.SetMethod(hreq.Method)
	}
	if hreq.Host != "" && hreq.Host != u.Host {
		r.SetHost(hreq.Host)
	}
	for name, vs := range hreq.Header {
		if name == "User-Agent" {
			continue // written below, once, as net/http does
		}
		for _, v := range vs {
			r.AddHeader(name, v)
		}
	}
	if u.User != nil && hreq.Header["Authorization"] == nil {
		pw, _ := u.User.Password()
		r.AddHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	// As net/http: the default when the field is absent, the first value
	// when present, and nothing at all when that value is empty
	// (httputil.ReverseProxy sets "" to suppress it).
	if uas, ok := hreq.Header["User-Agent"]; !ok {
		r.hdrs = append(r.hdrs, "User-Agent: "+defaultUserAgent+"\r\n"...)
	} else if len(uas) > 0 && uas[0] != "" {
		r.AddHeader("User-Agent", uas[0])
	}
	r.hasUA = true
	if !c.DisableCompression && !r.hasAE && hreq.Header["Range"] == nil && hreq.Method != "HEAD" {
		r.hdrs = append(r.hdrs, "Accept-Encoding: gzip\r\n"...)
		gz = true
	}
	r.hasAE = true
	if hreq.Close {
		r.close = true
	}
	if hreq.Body != nil && hreq.Body != http.NoBody {
		size := hreq.ContentLength
		if size <= 0 {
			size = -1
		}
		r.SetBodyStream(hreq.Body, size)
		r.bodyCloser = hreq.Body
		if size < 0 && len(hreq.Trailer) > 0 {
			// Trailers go only with a chunked body, as in net/http.
			if !validTrailer(hreq.Trailer) {
				return false, ErrBadHeader
			}
			r.trailer = hreq.Trailer
		}
	} else if hreq.ContentLength > 0 {
		return false, errors.New("client: Request.ContentLength > 0 with nil Body")
	}
	return gz, nil
}

// validTrailer reports whether the request trailer's names may be sent,
// and its values as they are now: values filled in while the body is read
// are checked again before the last chunk (appendLastChunk).
func validTrailer(trailer http.Header) bool {
	for name, vs := range trailer {
		switch http.CanonicalHeaderKey(name) {
		case "Transfer-Encoding", "Trailer", "Content-Length":
			return false
		}
		if !h1.ValidHeaderName(name) {
			return false
		}
		for _, v := range vs {
			if !h1.ValidHeaderValue(v) {
				return false
			}
		}
	}
	return true
}

// appendRequestURI appends u's request-target in origin form.
func appendRequestURI(dst []byte, u *url.URL) []byte {
	if u.Opaque != "" {
		if strings.HasPrefix(u.Opaque, "//") {
			dst = append(dst, u.Scheme...)
			dst = append(dst, ':')
		}
		dst = append(dst, u.Opaque...)
	} else {
		path := u.EscapedPath()
		if path == "" {
			dst = append(dst, '/')
		} else {
			dst = append(dst, path...)
		}
	}
	if u.ForceQuery || u.RawQuery != "" {
		dst = append(dst, '?')
		dst = append(dst, u.RawQuery...)
	}
	return dst
}

// toHTTPResponse converts the head in resp into an *http.Response whose
// body streams the rest from the connection.
func (c *Client) toHTTPResponse(hreq *http.Request, resp *Response, ts *tls.ConnectionState, gz bool) *http.Response {
	h := &resp.head
	chunked := h.TransferEncoding && h.Chunked
	hr := &http.Response{
		Status:     statusString(h.Status, h.Reason),
		StatusCode: h.Status,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: h.Minor,
		Request:    hreq,
		TLS:        ts,
	}
	if h.Major == 3 {
		hr.Proto, hr.ProtoMajor, hr.ProtoMinor = "HTTP/3.0", 3, 0
	} else if h.Major == 2 {
		hr.Proto, hr.ProtoMajor, hr.ProtoMinor = "HTTP/2.0", 2, 0
	} else if h.Minor == 0 {
		hr.Proto = "HTTP/1.0"
	}
	hr.Header, hr.Trailer = buildHeader(h.Headers, chunked)
	if v := hr.Header["Connection"]; v != nil && h.Close {
		// net/http drops the field once it has acted on "close".
		for _, s := range v {
			if ascii.HasToken(s, "close") {
				delete(hr.Header, "Connection")
				break
			}
		}
	}
	if up := resp.Upgraded(); up != nil {
		// 101 Switching Protocols: as in net/http, the body is the
		// connection itself, an io.ReadWriteCloser.
		hr.Body = up
		return hr
	}
	isHead := hreq.Method == "HEAD"
	mode := h.BodyMode(isHead)
	switch {
	case isHead:
		hr.ContentLength = h.ContentLength
		if h.TransferEncoding {
			hr.ContentLength = -1
		}
	case !h1.BodyAllowed(h.Status):
		hr.ContentLength = 0
	case h.TransferEncoding:
		hr.ContentLength = -1
	default:
		hr.ContentLength = h.ContentLength
	}
	if chunked {
		hr.TransferEncoding = []string{"chunked"}
	}
	if h.Major >= 2 {
		// HTTP/2 and HTTP/3 frame the body themselves; the connection stays.
		if mode == h1.BodyUntilClose {
			mode = h1.BodyLength
		}
		if isHead || !h1.BodyAllowed(h.Status) {
			mode = h1.BodyNone
		}
	}
	hr.Close = h.Close || mode == h1.BodyUntilClose
	if mode == h1.BodyNone || resp.br.done {
		if resp.br.h2 != nil || resp.br.h3 != nil {
			resp.br.Close() // frees the stream
		}
		hr.Body = http.NoBody
		resp.stream = false
		return hr
	}
	b := &rtBody{br: resp.br, resp: hr}
	b.br.sink = b
	resp.stream = false
	hr.Body = b
	if gz && h1.EqualFold(h.Known(h1.HeaderContentEncoding), "gzip") {
		hr.Header.Del("Content-Encoding")
		hr.Header.Del("Content-Length")
		hr.ContentLength = -1
		hr.Uncompressed = true
		hr.Body = &gzipBody{body: b, max: resp.maxBody}
	}
	return hr
}

// buildHeader converts parsed fields into an http.Header with a handful of
// allocations: one string holds every value (and every name that is not a
// known canonical one), one slice backs every single-valued field.
// Framing fields are dropped as net/http does: Transfer-Encoding always,
// Content-Length and Trailer on a chunked message; the Trailer field's
// names become the keys of the returned trailer header.
func buildHeader(hs []h1.Header, chunked bool) (http.Header, http.Header) {
	size := 0
	for i := range hs {
		size += len(hs[i].Value)
		if hs[i].Key == h1.Unknown {
			size += len(hs[i].Name)
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	for i := range hs {
		if hs[i].Key == h1.Unknown {
			appendCanonical(&sb, hs[i].Name)
		}
		sb.Write(hs[i].Value)
	}
	all := sb.String()
	m := make(http.Header, len(hs))
	vals := make([]string, len(hs))
	var trailer http.Header
	off := 0
	seenCL := false
	for i := range hs {
		f := &hs[i]
		var key string
		if f.Key == h1.Unknown {
			key = all[off : off+len(f.Name)]
			off += len(f.Name)
		} else {
			key = f.Key.String()
		}
		v := all[off : off+len(f.Value)]
		off += len(f.Value)
		switch f.Key {
		case h1.HeaderTransferEncoding:
			continue
		case h1.HeaderContentLength:
			if chunked || seenCL {
				continue
			}
			seenCL = true
		case h1.HeaderTrailer:
			if chunked {
				for _, k := range strings.Split(v, ",") {
					if k = strings.TrimSpace(k); k != "" {
						if trailer == nil {
							trailer = make(http.Header)
						}
						trailer[http.CanonicalHeaderKey(k)] = nil
					}
				}
				continue
			}
		}
		if old, ok := m[key]; ok {
			m[key] = append(old, v)
			continue
		}
		vals[i] = v
		m[key] = vals[i : i+1 : i+1]
	}
	return m, trailer
}

// appendCanonical writes a field name in net/http's canonical form
// (upper case after start and '-', lower case elsewhere).
func appendCanonical(sb *strings.Builder, name []byte) {
	upper := true
	for _, ch := range name {
		if upper && 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		} else if !upper && 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		sb.WriteByte(ch)
		upper = ch == '-'
	}
}

var statusStrings [600]string

func init() {
	for code := 100; code < 600; code++ {
		if t := h1.StatusText(code); t != "" {
			statusStrings[code] = strconv.Itoa(code) + " " + t
		}
	}
}

// statusString returns http.Response.Status ("200 OK"), without
// allocating for registered codes with their usual reason phrase.
func statusString(code int, reason []byte) string {
	if code < 600 && statusStrings[code] != "" && string(reason) == h1.StatusText(code) {
		return statusStrings[code]
	}
	if len(reason) == 0 {
		return strconv.Itoa(code)
	}
	return strconv.Itoa(code) + " " + string(reason)
}

// rtBody is the http.Response.Body of RoundTrip. Close may be called from
// another goroutine while a Read is blocked: it then aborts the connection
// and the Read returns an error.
type rtBody struct {
	mu      sync.Mutex
	br      bodyReader
	resp    *http.Response
	aborted atomic.Bool
}

func (b *rtBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.br.Read(p)
}

func (b *rtBody) Close() error {
	if !b.mu.TryLock() {
		// A Read is in progress: abort it through the connection.
		b.aborted.Store(true)
		if b.br.h2 != nil {
			b.br.h2.abort()
		} else {
			b.br.c.nc.SetDeadline(aLongTimeAgo)
		}
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	b.aborted.Store(true)
	return b.br.Close()
}

// setTrailers stores the trailer fields in resp.Trailer.
func (b *rtBody) setTrailers(ts []h1.Header) {
	if b.resp.Trailer == nil {
		b.resp.Trailer = make(http.Header, len(ts))
	}
	for i := range ts {
		var sb strings.Builder
		appendCanonical(&sb, ts[i].Name)
		b.resp.Trailer.Add(sb.String(), string(ts[i].Value))
	}
}

// gzipBody decodes a gzip response body, creating the decoder on the first
// Read as net/http does.
type gzipBody struct {
	body *rtBody
	zr   *gzip.Reader
	err  error
	n    int64 // decoded bytes returned
	max  int64 // limit on n (Client.MaxResponseBodySize); 0: none
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	g.n += int64(n)
	if g.max > 0 && g.n > g.max {
		n, err = 0, ErrBodyTooLarge
	}
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }

var _ http.RoundTripper = (*Client)(nil)

// upgradedConn is the body of a 101 response: the connection, starting with
// any bytes that arrived behind the response head.
type upgradedConn struct {
	c    *conn
	once sync.Once
	err  error
}

// Read reads the switched protocol's bytes from the server.
func (u *upgradedConn) Read(p []byte) (int, error) { return u.c.read(p) }

// Write sends bytes of the switched protocol to the server.
func (u *upgradedConn) Write(p []byte) (int, error) { return u.c.nc.Write(p) }

// Close closes the connection and frees its place in the pool.
func (u *upgradedConn) Close() error {
	u.once.Do(func() {
		u.err = u.c.nc.Close()
		u.c.p.releaseSlot()
	})
	return u.err
}
