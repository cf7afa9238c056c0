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
// is discarded before anything is written to it. If a reused connection
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
// # Ownership
//
// A Request and a Response belong to the goroutine using them. Everything a
// Response returns points into its own storage and is valid until it is
// passed to Do again or Reset; the Request may be reused when Do returns.
// See Request, Response and Do for the exact rules.
package client
