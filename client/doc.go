// Package client is riptide's pooled keep-alive HTTP/1.1 client, built on
// the sans-I/O codec in package h1.
//
// The native API reuses caller-owned objects and allocates nothing per
// request once warm:
//
//	var c client.Client // zero value: sensible defaults
//	var req client.Request
//	var resp client.Response
//	req.SetURL("http://127.0.0.1:8080/hello")
//	err := c.Do(ctx, &req, &resp) // resp.StatusCode(), resp.Body() valid until resp is reused
//
// A *Client is also an http.RoundTripper, so code written for net/http gets
// the same pools:
//
//	hc := &http.Client{Transport: &client.Client{}}
//
// # Connections
//
// Each origin (scheme and host:port) has its own pool, bounded by
// MaxConnsPerHost, with idle connections kept up to IdleTimeout. Before an
// idle connection carries a request, however soon it is reused, the client
// checks with a non-blocking peek at the socket that the server has
// neither closed it nor sent anything meanwhile: a connection the server
// dropped, or one holding bytes no request asked for (an unsolicited
// response, which would otherwise be taken as the next request's answer),
// is discarded before anything is written to it. The peek is made right
// before the request is written; on a connection that is a plain
// *net.TCPConn or *net.UnixConn (not TLS, not a wrapper returned by
// Client.Dial) the client makes it, writes the request and waits for the
// response under one pass through the runtime's poller, in place of the
// read that would find nothing yet, so the check adds no system call to an
// exchange. If a reused connection
// fails before any response byte arrives (the server closed it as the
// request went out), idempotent requests are sent again on a new
// connection. Optional pipelining (Client.Pipeline) keeps several
// idempotent requests in flight per connection; there a connection is
// checked the same way whenever a request is written with no response
// outstanding.
//
// # Timeouts and cancellation
//
// DialTimeout, TLSHandshakeTimeout, ResponseHeaderTimeout and Timeout (the
// whole exchange) are Client fields; each expiry is a *TimeoutError that
// matches ErrTimeout. The context passed to Do, or the http.Request's
// context, cancels the exchange at any point, including while the body is
// read; the error is then the context's.
//
// # Bodies
//
// Request bodies are bytes (SetBody) or streams (SetBodyStream), sent with
// Content-Length or chunked, optionally after "Expect: 100-continue".
// Response bodies are read whole by Do (bounded by MaxResponseBodySize) or
// streamed by DoStream and RoundTrip, in which case the server is read only
// as fast as the caller consumes the body. Gzip is decoded transparently
// when asked for (Client.Gzip; RoundTrip by default, as net/http does).
// RoundTrip sends request trailers (http.Request.Trailer) after a chunked
// body. A 101 (Switching Protocols) response hands the connection over:
// Response.Upgraded in the native API, the response Body (an
// io.ReadWriteCloser) through RoundTrip, as with net/http.
//
// # Limits
//
// A client talks to servers it may not trust, so everything a response
// can make it hold is bounded by default:
//
//   - Response bodies read by Do: MaxResponseBodySize, by default
//     DefaultMaxResponseBodySize (64 MiB), counted after gzip decoding
//     (ErrBodyTooLarge). DoStream and RoundTrip stream and are unlimited
//     unless MaxResponseBodySize is set; a negative value means no limit
//     anywhere. A declared Content-Length is never used to size a buffer
//     beyond 64 KiB: the body buffer grows with the bytes that arrive.
//   - Response heads: Limits (h1.DefaultLimits: 8 KiB status line and
//     field lines, 64 KiB head, 100 fields), and the connection's read
//     buffer grows to 1 MiB at most.
//   - Interim (1xx) responses: Max1xxResponses (32) per request and
//     Max1xxBytes (1 MiB) of them (ErrTooMany1xx), and the same for a
//     proxy's answer to CONNECT.
//   - Connections: bytes that arrive while no request is outstanding
//     retire the connection (see Connections), so a response is never
//     matched to a later request.
//
// Every request field the client writes (method, target, Host, header
// and trailer fields, Client.UserAgent) is checked first; a bad one fails
// the request with ErrBadMethod, ErrBadURL or ErrBadHeader before a byte
// is sent. Redirects followed by Do drop credentials and cookies when they
// leave the initial host and its subdomains, as net/http's Client does.
// Timeouts are listed above; those without a default (Timeout,
// ResponseHeaderTimeout) are off when zero.
//
// # Proxies, cookies, HTTP/2
//
// Client.Proxy sends every request through one proxy: HTTP (absolute-form
// requests, CONNECT tunnels for https), HTTPS, or SOCKS5 (socks5:// and
// socks5h://, the proxy resolving names). Client.ProxyFunc chooses per
// origin instead; ProxyFromEnvironment is net/http's HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY rule. A Client uses no proxy and ignores the
// environment unless told, as a zero http.Transport does. Client.Jar (an
// http.CookieJar, e.g. net/http/cookiejar) keeps the cookies of Do's
// responses and sends them back. With both unset a request costs nothing
// more: the proxy is chosen once per origin, and the jar is not asked.
//
// Over TLS the client offers HTTP/2 in ALPN ("h2" before "http/1.1",
// unless DisableHTTP2) and speaks it to a server that picks it: an
// origin's requests then share one connection, as concurrent streams, and
// a new connection is opened only when the server's
// SETTINGS_MAX_CONCURRENT_STREAMS is reached. Plain-TCP HTTP/2 (h2c, with
// prior knowledge) is used for the origins listed in H2CHosts. The native
// API, RoundTrip, limits and timeouts are the same over both protocols;
// docs/client.md lists what differs. A server that answers an HTTP/1.1
// request with HTTP/2 frames (an HTTP/2-only port not listed in H2CHosts)
// fails the request with ErrHTTP2Only.
//
// # Ownership
//
// A Request and a Response belong to the goroutine using them. Everything a
// Response returns points into its own storage and is valid until it is
// passed to Do again or Reset; the Request may be reused when Do returns.
// See Request, Response and Do for the exact rules.
package client
