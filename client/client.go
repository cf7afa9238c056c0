package client

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/netx"
)

// Defaults applied when the corresponding Client field is zero.
const (
	DefaultDialTimeout           = 30 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultIdleTimeout           = 90 * time.Second
	DefaultMaxIdleConnsPerHost   = 512
	DefaultExpectContinueTimeout = 1 * time.Second
	DefaultMaxRetries            = 2
	DefaultHTTP2PingTimeout      = 15 * time.Second
	// DefaultMaxResponseBodySize bounds the bodies Do reads into memory
	// (after gzip decoding, when the client decodes) when
	// MaxResponseBodySize is zero.
	DefaultMaxResponseBodySize = 64 << 20
)

// Bounds on the interim (1xx) responses read before a final response, per
// request and per CONNECT to a proxy: more, or more bytes of them, fail
// the request with ErrTooMany1xx. net/http bounds their bytes only (10 MB
// of heads) and fails a CONNECT at the first.
const (
	Max1xxResponses = 32
	Max1xxBytes     = 1 << 20
)

// Client is a pooled keep-alive HTTP/1.1 and HTTP/2 client. It offers two APIs on the
// same connection pools:
//
//   - Do and DoStream, the native API, with caller-owned reusable Request
//     and Response objects and no allocation per request in steady state;
//   - RoundTrip, which makes a *Client an http.RoundTripper for use as
//     http.Client's Transport.
//
// Configure a Client before its first request and do not change its fields
// afterwards. A Client is safe for concurrent use by many goroutines; its
// zero value is ready to use with the defaults documented on each field.
type Client struct {
	// Dial opens TCP connections. Nil uses a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSConfig configures TLS for https origins (and https proxies).
	// ServerName defaults to the URL's host, so that SNI and certificate
	// verification use the host of the URL even when the Host header is
	// overridden.
	TLSConfig *tls.Config
	// Proxy, if set, sends every request through this HTTP proxy: plain
	// http requests in absolute form, https requests through a CONNECT
	// tunnel. An https proxy URL is reached over TLS. User info in the URL
	// is sent as Basic Proxy-Authorization. A socks5 or socks5h URL sends
	// every connection through that SOCKS5 proxy (RFC 1928; user info as
	// RFC 1929 credentials), the proxy resolving the origin's name.
	Proxy *url.URL
	// ProxyFunc, if set, chooses the proxy of each origin in place of
	// Proxy: it is called once per origin (scheme and host:port), when the
	// client first sends a request there, with a URL holding just Scheme and
	// Host; a nil URL means a direct connection, and an error fails the
	// requests to that origin. ProxyFromEnvironment reads HTTP_PROXY,
	// HTTPS_PROXY and NO_PROXY as net/http does. Neither is used unless
	// set: a Client ignores the environment by default, as a zero
	// http.Transport does.
	ProxyFunc func(origin *url.URL) (*url.URL, error)
	// Jar, if set, stores the cookies of Do's and DoStream's responses
	// (Set-Cookie) and adds those it holds for a request's URL to the
	// request, in its Cookie field, as http.Client's Jar does, also on each
	// redirect Do follows. The caller's Request is left as it was.
	// RoundTrip ignores it: set the Jar of the http.Client instead.
	Jar http.CookieJar

	// MaxConnsPerHost bounds the connections (idle, busy and dialing) to
	// one origin; requests beyond it wait for a connection. 0: no limit.
	MaxConnsPerHost int
	// MaxIdleConnsPerHost bounds the idle connections kept per origin.
	// 0: DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
	// IdleTimeout closes connections idle for longer. 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Pipeline, when above 1, lets up to Pipeline requests be in flight on
	// one connection (HTTP/1.1 pipelining). Only idempotent requests sent
	// with Do are pipelined; others use their own connection. A server that
	// mishandles pipelining makes the pipelined requests fail (and be
	// retried on a fresh connection), so enable it only for servers known
	// to support it.
	Pipeline int

	// DialTimeout bounds connecting. 0: DefaultDialTimeout.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake. 0:
	// DefaultTLSHandshakeTimeout.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response head after
	// the request was written. 0: no limit.
	ResponseHeaderTimeout time.Duration
	// Timeout bounds a whole exchange: getting a connection, writing the
	// request and reading the response body (for DoStream and RoundTrip,
	// until the body is read or closed). 0: no limit. A context deadline
	// applies as well.
	Timeout time.Duration
	// ExpectContinueTimeout bounds the wait for "100 Continue" when the
	// request carries "Expect: 100-continue" (over HTTP/1.1 and HTTP/2);
	// the body is sent when it expires. 0: DefaultExpectContinueTimeout.
	ExpectContinueTimeout time.Duration

	// MaxResponseBodySize bounds response bodies, counted after gzip
	// decoding when the client decodes; a larger body fails with
	// ErrBodyTooLarge. 0: DefaultMaxResponseBodySize for Do, which holds
	// the body in memory, and no limit for the streaming DoStream and
	// RoundTrip. Negative: no limit anywhere.
	MaxResponseBodySize int64
	// MaxRetries bounds how often an idempotent request is sent again when
	// a reused connection fails before any response byte arrives. 0:
	// DefaultMaxRetries; negative: never retry.
	MaxRetries int
	// MaxRedirects makes Do follow up to this many redirects (301, 302,
	// 303, 307, 308). 0: Do returns redirects to the caller. RoundTrip never
	// follows redirects: http.Client does.
	MaxRedirects int
	// Gzip makes Do ask for gzip (unless the request sets Accept-Encoding)
	// and decompress a gzip body into Response.Body. RoundTrip does the same
	// unless DisableCompression is set, as net/http's Transport does.
	Gzip bool
	// DisableCompression turns off RoundTrip's transparent gzip.
	DisableCompression bool
	// UserAgent, if set, is sent by Do when the request has none.
	// RoundTrip sends net/http's default when the request has none.
	UserAgent string

	// ReadBufferSize and WriteBufferSize size each connection's buffers.
	// 0: 4 KiB. The read buffer grows to hold a larger response head.
	ReadBufferSize  int
	WriteBufferSize int
	// Limits bound response heads and chunked framing; zero fields take
	// h1.DefaultLimits.
	Limits h1.Limits

	// DisableHTTP2 stops the client from offering HTTP/2 in TLS's ALPN:
	// https origins are then spoken to in HTTP/1.1. By default the client
	// offers "h2" before "http/1.1" and speaks HTTP/2 to a server that
	// picks it, multiplexing an origin's requests on one connection (more
	// when the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached).
	DisableHTTP2 bool
	// H2CHosts lists the origins, as host:port (the URL's authority, port
	// included), spoken to in HTTP/2 over plain TCP with prior knowledge
	// (h2c, RFC 9113 §3.3): http URLs of those hosts never use HTTP/1.1.
	// Not used through an HTTP proxy.
	H2CHosts []string
	// HTTP2ReadIdleTimeout, if set, makes an HTTP/2 connection that read
	// nothing for that long send a PING; one whose server does not answer
	// within HTTP2PingTimeout is closed, failing its requests with
	// ErrHTTP2PingTimeout. 0: no keep-alive PING.
	HTTP2ReadIdleTimeout time.Duration
	// HTTP2PingTimeout: see HTTP2ReadIdleTimeout. 0:
	// DefaultHTTP2PingTimeout.
	HTTP2PingTimeout time.Duration
	// HTTP3, if set, sends https requests over HTTP/3 where it says: to
	// origins that offered it in Alt-Svc, or to every https origin. See
	// HTTP3 and package github.com/riptide-http/riptide/http3.
	HTTP3 *HTTP3

	mu    sync.RWMutex
	pools map[string]*hostPool
}

// poolFor returns the connection pool of req's origin.
func (c *Client) poolFor(req *Request) (*hostPool, error) {
	if p := req.pool; p != nil && p.c == c {
		return p, nil
	}
	if req.urlErr != nil {
		return nil, req.urlErr
	}
	if len(req.host) == 0 {
		return nil, ErrBadURL
	}
	p := c.lookup(req.key, req.https, req.host)
	req.pool = p
	return p, nil
}

func (c *Client) lookup(key []byte, https bool, host []byte) *hostPool {
	c.mu.RLock()
	p := c.pools[string(key)]
	c.mu.RUnlock()
	if p != nil {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p = c.pools[string(key)]; p == nil {
		if c.pools == nil {
			c.pools = make(map[string]*hostPool)
		}
		p = newHostPool(c, https, string(host))
		c.pools[string(key)] = p
	}
	return p
}

// CloseIdleConnections closes the connections now idle in every pool, and
// the HTTP/3 transport's (HTTP3). Connections in use are not affected.
func (c *Client) CloseIdleConnections() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range c.pools {
		p.closeIdle()
		p.closeIdleH2()
	}
	if c.HTTP3 != nil {
		c.HTTP3.Transport.CloseIdleConnections()
	}
}

// Do sends req and reads the whole response into resp.
//
// resp is reset first; on return its status, headers, body and trailers
// are valid until resp is reused (see Response). req may be reused as soon
// as Do returns. With a context that can never be done
// (context.Background) and a reused connection, Do does not allocate; a
// cancellable context costs a small allocation for its watcher.
//
// An idempotent request (GET, HEAD, OPTIONS, TRACE, PUT, DELETE, or one
// with an Idempotency-Key header) whose body is not a stream is sent again,
// up to MaxRetries times, when a reused connection fails before the
// response begins. A non-2xx status is not an error.
func (c *Client) Do(ctx context.Context, req *Request, resp *Response) error {
	if c.MaxRedirects > 0 {
		return c.doRedirects(ctx, req, resp)
	}
	return c.do(ctx, req, resp, false)
}

// DoStream sends req and reads the response head into resp, leaving the
// body on the connection: read it from resp.BodyStream, and read it to
// io.EOF or Close it to release the connection. The body is read from the
// network only as fast as the caller reads it. Redirects are not followed
// and Gzip does not apply. After a 101 (Switching Protocols) response, take
// the connection with resp.Upgraded.
func (c *Client) DoStream(ctx context.Context, req *Request, resp *Response) error {
	return c.do(ctx, req, resp, true)
}

// deadline returns the deadline of an exchange starting now.
func (c *Client) deadline(ctx context.Context) time.Time {
	var d time.Time
	if c.Timeout > 0 {
		d = time.Now().Add(c.Timeout)
	}
	if cd, ok := ctx.Deadline(); ok && (d.IsZero() || cd.Before(d)) {
		d = cd
	}
	return d
}

// bodyLimit returns the response body limit for the buffered (Do) or
// streaming API; 0 means none.
func (c *Client) bodyLimit(stream bool) int64 {
	switch n := c.MaxResponseBodySize; {
	case n < 0:
		return 0
	case n == 0 && !stream:
		return DefaultMaxResponseBodySize
	default:
		return n
	}
}

func (c *Client) maxRetries() int {
	switch {
	case c.MaxRetries < 0:
		return 0
	case c.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return c.MaxRetries
}

func (c *Client) do(ctx context.Context, req *Request, resp *Response, stream bool) error {
	resp.Reset()
	if err := c.checkRequest(req); err != nil {
		return err
	}
	if c.Jar != nil {
		return c.doJar(ctx, req, resp, stream)
	}
	return c.exchange(ctx, req, resp, stream)
}

// exchange is do once the request is checked.
func (c *Client) exchange(ctx context.Context, req *Request, resp *Response, stream bool) error {
	p, err := c.poolFor(req)
	if err != nil {
		return err
	}
	deadline := c.deadline(ctx)
	if c.HTTP3 != nil {
		if done, _, err := c.exchangeHTTP3(ctx, p, req, resp, deadline, stream); done {
			return err
		}
	}
	pipelined := c.Pipeline > 1 && !stream && req.idempotent() && !req.close && !p.h2mode.Load()
	for attempt, unsent := 0, 0; ; {
		var cn *conn
		var hc *h2Conn
		retryable := attempt < c.maxRetries() && req.idempotent()
		if pipelined {
			cn, err = p.getPipe(ctx, deadline)
		} else {
			cn, hc, err = p.acquire(ctx, deadline)
		}
		if err != nil {
			return err
		}
		if hc != nil {
			err := c.h2Exchange(ctx, p, hc, req, resp, deadline, stream)
			if err == nil {
				c.observeAltSvc(p, resp)
			}
			return err
		}
		retry, err := cn.exchange(ctx, req, resp, deadline, stream)
		if err == nil {
			c.observeAltSvc(p, resp)
			return nil
		}
		if err == errNotQuiet {
			// As a closed idle connection: each one found is closed, and
			// new connections are not checked.
			continue
		}
		if err == errNotSent && unsent < maxNotSent && ctx.Err() == nil {
			// Nothing was written: another connection is always safe.
			unsent++
			continue
		}
		if !retry || !retryable || ctx.Err() != nil {
			return err
		}
		resp.Reset()
		attempt++
	}
}

// errNotSent reports a pipelined connection found failed or unusable
// before the request was written to it. Do then takes another connection,
// up to maxNotSent times in a row.
var errNotSent error = errorString("client: connection failed before the request was sent")

const maxNotSent = 16

// errNotQuiet reports a reused connection found, before the request was
// written to it, closed by the server or holding bytes no request asked
// for (see conn.quiet). It was closed; Do and RoundTrip take another
// connection.
var errNotQuiet error = errorString("client: idle connection closed or not quiet")

// checkRequest reports why req cannot be sent by c: see Request.check; the
// client's own User-Agent is checked too.
func (c *Client) checkRequest(req *Request) error {
	if err := req.check(); err != nil {
		return err
	}
	if c.UserAgent != "" && !req.hasUA && !h1.ValidHeaderValue(c.UserAgent) {
		return ErrBadHeader
	}
	return nil
}

// exchange sends req on c and reads the response into resp. retry reports
// that the request failed before any response byte arrived on a reused
// connection, so that it may be sent again on another connection.
func (c *conn) exchange(ctx context.Context, req *Request, resp *Response, deadline time.Time, stream bool) (retry bool, err error) {
	cl := c.p.c
	var hdr time.Time
	if cl.ResponseHeaderTimeout > 0 {
		hdr = time.Now().Add(cl.ResponseHeaderTimeout)
	}
	resp.maxBody = cl.bodyLimit(stream)
	if c.pipe != nil {
		return c.pipeExchange(ctx, req, resp, deadline, hdr)
	}
	hasBody := req.bodyStream != nil || len(req.body) > 0
	expect := req.expect100 && hasBody
	inline := hasBody && !expect && req.bodyStream == nil && len(req.body) <= inlineBodyMax
	bodySent := !hasBody || inline // by the first write
	// The whole request goes in one write: check, write and read in one go
	// where the connection allows (see liveness.sendRecv).
	fused := bodySent && c.live.canSend()
	reused := c.reused
	// A reused connection must be quiet (see quiet), whether it came from
	// the idle list or was handed over by put: checked right before the
	// request is written, here or by sendRecv.
	if reused && (c.r != c.w || !fused && !c.quiet()) {
		c.p.closeConn(c)
		return false, errNotQuiet
	}
	c.got = false
	c.i1xx = interims{}
	c.setDeadlines(deadline, hdr)
	if err := c.watch(ctx); err != nil {
		c.discard()
		return false, err
	}
	fail := func(err error) (bool, error) {
		c.discard()
		return reused && !c.got && !netx.Timeout(err) && ctx.Err() == nil, err
	}

	w := c.appendHead(c.wbuf[:0], req)
	if inline {
		w = append(w, req.body...)
	}
	c.wbuf = w[:0]
	if fused {
		c.r, c.w = 0, 0
		st, n, err := c.live.sendRecv(w, c.rbuf, reused)
		switch st {
		case sendNotQuiet:
			c.discard()
			return false, errNotQuiet
		case sendFailed:
			return fail(c.readErr(err, false))
		case sendPartial:
			if err := c.write(w[n:]); err != nil {
				return fail(err)
			}
		default: // sendRead
			if err == nil && n == 0 {
				err = io.EOF
			}
			if err != nil {
				return c.headFailed(c.readErr(err, false))
			}
			c.w, c.got = n, true
		}
		return c.readResponse(req, resp, deadline, true, stream)
	}
	if err := c.write(w); err != nil {
		return fail(err)
	}
	send := !bodySent
	if expect {
		resp.parsing = true
		send, err = c.await100(&resp.head, cl.expectTimeout(), readDeadline(deadline, hdr))
		if err != nil {
			return fail(err)
		}
	}
	if send {
		if req.bodyStream != nil {
			err = c.writeStream(req.bodyStream, req.bodySize, req.trailer)
		} else {
			err = c.write(req.body)
		}
		if err != nil {
			return fail(err)
		}
		bodySent = true
	}
	return c.readResponse(req, resp, deadline, bodySent, stream)
}

// readResponse reads the response head into resp and then the body (or,
// for stream, prepares resp.BodyStream). The connection is released or
// closed when the body ends.
func (c *conn) readResponse(req *Request, resp *Response, deadline time.Time, bodySent, stream bool) (retry bool, err error) {
	cl := c.p.c
	resp.parsing = true
	n, err := c.readHeadFinal(&resp.head)
	if err != nil {
		return c.headFailed(err)
	}
	resp.parsing = false
	if h := &resp.head; h.TransferEncoding && (!h.Chunked || h.UnknownCoding) {
		// A coding other than chunked would leave the body coded in a
		// way the client does not undo.
		c.discard()
		return false, ErrUnsupportedTransferCoding
	}
	resp.setHead(c.rbuf[c.r : c.r+n])
	c.r += n
	if c.hdrTimeout {
		c.hdrTimeout = false
		c.setReadDeadline(deadline)
	}
	h := &resp.head
	if h.Status == 101 && stream && h.Upgrade {
		// The connection now carries another protocol: hand it over.
		ctx := c.ctx
		if !c.endExchange() {
			// The context was cancelled as the switch arrived.
			c.p.closeConn(c)
			return false, context.Cause(ctx)
		}
		c.setDeadlines(time.Time{}, time.Time{})
		resp.upgraded = c
		return false, nil
	}
	isHead := isHeadMethod(req.Method())
	mode := h.BodyMode(isHead)
	keep := bodySent && !h.Close && !req.close && mode != h1.BodyUntilClose && h.Status != 101
	resp.br.init(c, mode, h.ContentLength, resp.maxBody, keep, resp)
	if stream {
		resp.stream = mode != h1.BodyNone
		return false, nil
	}
	resp.body, err = resp.br.readAll(resp.body[:0])
	if err != nil {
		return false, err
	}
	if cl.Gzip && !req.hasAE && !isHead {
		if err := resp.gunzip(); err != nil {
			return false, err
		}
	}
	return false, nil
}

// headFailed closes c after err ended the wait for the response head. The
// request may be sent again if it was written on a reused (or pipelined)
// connection and no response byte arrived.
func (c *conn) headFailed(err error) (retry bool, _ error) {
	retry = !c.got && !netx.Timeout(err) && (c.ctx == nil || c.ctx.Err() == nil) && (c.reused || c.pipe != nil)
	c.discard()
	return retry, err
}

// readHeadFinal reads response heads until a final one, skipping interim
// (1xx) responses other than 101.
func (c *conn) readHeadFinal(h *h1.Response) (int, error) {
	for {
		n, err := c.readHead(h)
		if err != nil {
			return 0, err
		}
		if h.Status >= 200 || h.Status == 101 {
			return n, nil
		}
		if err := c.interim(n); err != nil {
			return 0, err
		}
		if err := c.got1xx(h); err != nil {
			return 0, err
		}
		c.r += n
	}
}

// interim counts an interim (1xx) response head of n bytes against
// Max1xxResponses and Max1xxBytes.
func (c *conn) interim(n int) error { return c.i1xx.add(n) }

// interims counts the interim (1xx) responses read before a final one:
// for a request, or for a proxy's answer to CONNECT.
type interims struct {
	n, bytes int
}

// add counts an interim response head of n bytes; ErrTooMany1xx once
// there are more than Max1xxResponses or Max1xxBytes of them.
func (i *interims) add(n int) error {
	i.n++
	i.bytes += n
	if i.n > Max1xxResponses || i.bytes > Max1xxBytes {
		return ErrTooMany1xx
	}
	return nil
}

func (c *Client) expectTimeout() time.Duration {
	if d := c.ExpectContinueTimeout; d > 0 {
		return d
	}
	return DefaultExpectContinueTimeout
}

// readDeadline returns the read deadline while waiting for a head.
func readDeadline(deadline, hdr time.Time) time.Time {
	if hdr.IsZero() || (!deadline.IsZero() && deadline.Before(hdr)) {
		return deadline
	}
	return hdr
}

// appendHead appends the request head for req to w.
func (c *conn) appendHead(w []byte, req *Request) []byte {
	p := c.p
	cl := p.c
	if p.proxy != nil && !p.https {
		// Absolute form through a plain HTTP proxy (RFC 9112 §3.2.2).
		w = append(w, req.Method()...)
		w = append(w, " http://"...)
		w = append(w, req.host...)
		w = append(w, req.uri...)
		w = append(w, " HTTP/1.1\r\n"...)
		if p.proxyAuth != "" {
			w = h1.AppendHeader(w, "Proxy-Authorization", p.proxyAuth)
		}
	} else {
		w = h1.AppendRequestLine(w, req.Method(), req.uri)
	}
	w = h1.AppendHeader(w, "Host", req.hostHeader())
	w = append(w, req.hdrs...)
	if cl.UserAgent != "" && !req.hasUA {
		w = h1.AppendHeader(w, "User-Agent", cl.UserAgent)
	}
	if cl.Gzip && !req.hasAE && !isHeadMethod(req.Method()) {
		w = append(w, "Accept-Encoding: gzip\r\n"...)
	}
	switch mode, n := h1.BodyFraming(req.outgoing()); mode {
	case h1.BodyChunked:
		w = append(w, "Transfer-Encoding: chunked\r\n"...)
	case h1.BodyLength:
		w = h1.AppendContentLength(w, n)
	}
	if req.trailer != nil {
		w = appendTrailerField(w, req.trailer)
	}
	if req.expect100 && (req.bodyStream != nil || len(req.body) > 0) {
		w = append(w, "Expect: 100-continue\r\n"...)
	}
	if req.close {
		w = append(w, "Connection: close\r\n"...)
	}
	return append(w, '\r', '\n')
}

// outgoing describes r's body for h1.BodyFraming: bytes are complete, a
// stream of known size declares it, one of unknown size (-1) is chunked.
// Trailers go only with the latter (Request.trailer), so they change
// nothing here.
func (r *Request) outgoing() h1.Outgoing {
	m := h1.Outgoing{Method: r.Method(), ContentLength: -1}
	if r.bodyStream != nil {
		m.ContentLength = r.bodySize
	} else {
		m.Complete, m.Size = true, int64(len(r.body))
	}
	return m
}

// appendTrailerField appends the Trailer field announcing trailer's names,
// sorted and canonical, as net/http does.
func appendTrailerField(w []byte, trailer http.Header) []byte {
	names := make([]string, 0, len(trailer))
	for name := range trailer {
		names = append(names, http.CanonicalHeaderKey(name))
	}
	slices.Sort(names)
	return h1.AppendHeader(w, "Trailer", strings.Join(names, ","))
}

// got1xxHook returns the function that passes an interim (1xx) response
// to the caller, from the httptrace.ClientTrace of the request's context
// (Got1xxResponse, and Got100Continue for a 100), or nil when there is
// none. It is looked up only when an interim response arrives.
func got1xxHook(ctx context.Context) func(int, textproto.MIMEHeader) error {
	if ctx == nil {
		return nil
	}
	tr := httptrace.ContextClientTrace(ctx)
	if tr == nil || tr.Got1xxResponse == nil && tr.Got100Continue == nil {
		return nil
	}
	return func(code int, h textproto.MIMEHeader) error {
		if code == 100 && tr.Got100Continue != nil {
			tr.Got100Continue()
		}
		if tr.Got1xxResponse != nil {
			return tr.Got1xxResponse(code, h)
		}
		return nil
	}
}

// got1xx passes the interim response h, just parsed, to the caller's hook
// (got1xxHook), if any.
func (c *conn) got1xx(h *h1.Response) error {
	hook := got1xxHook(c.ctx)
	if hook == nil {
		return nil
	}
	mh := make(textproto.MIMEHeader, len(h.Headers))
	for _, f := range h.Headers {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		mh[k] = append(mh[k], string(f.Value))
	}
	return hook(h.Status, mh)
}
