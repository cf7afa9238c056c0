package client

import (
	"errors"
	"fmt"

	"github.com/riptide-http/riptide/internal/h2"
)

// Errors returned by the client. Timeouts are *TimeoutError values, so
// errors.Is(err, ErrTimeout) matches any of them and they satisfy net.Error.
var (
	// ErrBodyTooLarge is returned when a response body exceeds
	// Client.MaxResponseBodySize. The connection is closed.
	ErrBodyTooLarge = errors.New("client: response body too large")
	// ErrBadURL is returned for a URL the client cannot send to: a scheme
	// other than http or https, or a missing or invalid host.
	ErrBadURL = errors.New("client: invalid URL")
	// ErrBadHeader is returned when a request header name or value may not
	// be sent (not a token, or containing CR, LF or other control bytes).
	ErrBadHeader = errors.New("client: invalid request header field")
	// ErrBadMethod is returned when the request method is not a token.
	ErrBadMethod = errors.New("client: invalid request method")
	// ErrTooManyRedirects is returned by Do when Client.MaxRedirects
	// redirects were followed and the last response is a redirect too.
	ErrTooManyRedirects = errors.New("client: too many redirects")
	// ErrBodyLength is returned when a request body stream yields a
	// different number of bytes than its declared length.
	ErrBodyLength = errors.New("client: request body length does not match declared size")
	// ErrUnsupportedTransferCoding is returned for a response whose
	// Transfer-Encoding is anything but a single "chunked": the client
	// cannot undo other transfer codings.
	ErrUnsupportedTransferCoding = errors.New("client: unsupported transfer coding in response")
	// ErrTooMany1xx is returned when the server sends more than
	// Max1xxResponses interim (1xx) responses, or more than Max1xxBytes of
	// them, before the final one. The connection is closed.
	ErrTooMany1xx = errors.New("client: too many 1xx responses")
	// ErrServerClosed is returned when the server closed the connection
	// before sending a response.
	ErrServerClosed = errors.New("client: server closed connection before responding")
	// ErrHTTP2Only is returned when the server answered the HTTP/1.1
	// request with HTTP/2 frames (its SETTINGS or a GOAWAY): it speaks
	// only HTTP/2 on that port (a gRPC server, an h2c-only endpoint), which
	// this client does not support yet. The connection is closed.
	ErrHTTP2Only = errors.New("client: server speaks HTTP/2 only (got an HTTP/2 frame in place of an HTTP/1.1 response); list its host in Client.H2CHosts to speak HTTP/2 with prior knowledge")
	// ErrHTTP2HeaderListTooLarge is returned when an HTTP/2 response's
	// header list (or trailers) exceeds 64 KiB as HPACK counts it (the
	// SETTINGS_MAX_HEADER_LIST_SIZE the client sends). The stream is reset;
	// the connection goes on.
	ErrHTTP2HeaderListTooLarge = errors.New("client: HTTP/2 response header list too large")
	// ErrHTTP2PingTimeout is returned for the requests of an HTTP/2
	// connection closed because the server did not answer a keep-alive
	// PING within Client.HTTP2PingTimeout.
	ErrHTTP2PingTimeout = errors.New("client: HTTP/2 server did not answer PING")
)

// HTTP2Error is an HTTP/2 error (RFC 9113 §7) that failed a request: the
// server reset its stream (RST_STREAM) or ended the connection (GOAWAY)
// with an error code after processing it, or the server broke the
// protocol and the client ended the connection (Remote false).
type HTTP2Error struct {
	// Code is the error code (RFC 9113 §7): 0x1 PROTOCOL_ERROR, 0x8
	// CANCEL, ...
	Code uint32
	// GoAway reports an error of the connection, not of one stream.
	GoAway bool
	// Remote reports that the server sent the error.
	Remote bool
}

func (e *HTTP2Error) Error() string {
	s := "client: HTTP/2 stream reset by server: "
	switch {
	case e.GoAway && e.Remote:
		s = "client: HTTP/2 connection ended by server (GOAWAY): "
	case e.GoAway:
		s = "client: HTTP/2 protocol error of server, connection ended: "
	case !e.Remote:
		s = "client: HTTP/2 stream reset: "
	}
	return s + h2.ErrCode(e.Code).String()
}

// Errors of HTTP/2 streams that are not the server's codes.
var (
	// errH2Unprocessed: GOAWAY named the stream unprocessed, or
	// RST_STREAM(REFUSED_STREAM): the request may be sent again anywhere.
	errH2Unprocessed error = errorString("client: HTTP/2 server did not process the request (GOAWAY or REFUSED_STREAM)")
	// errH2Malformed: a malformed response (RFC 9113 §8.1.1).
	errH2Malformed error = errorString("client: malformed HTTP/2 response")
)

// TimeoutError reports which timeout expired. It implements net.Error.
type TimeoutError struct {
	What string // "dial", "TLS handshake", "response header", "request"
}

func (e *TimeoutError) Error() string { return "client: " + e.What + " timeout" }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true, as net.Error requires of timeouts.
func (e *TimeoutError) Temporary() bool { return true }

// Is makes errors.Is(err, ErrTimeout) match every *TimeoutError.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Timeout errors.
var (
	// ErrTimeout matches every timeout below through errors.Is.
	ErrTimeout = errors.New("client: timeout")
	// ErrDialTimeout: Client.DialTimeout expired while connecting.
	ErrDialTimeout error = &TimeoutError{"dial"}
	// ErrTLSHandshakeTimeout: Client.TLSHandshakeTimeout expired.
	ErrTLSHandshakeTimeout error = &TimeoutError{"TLS handshake"}
	// ErrResponseHeaderTimeout: Client.ResponseHeaderTimeout expired
	// before the response head arrived.
	ErrResponseHeaderTimeout error = &TimeoutError{"response header"}
	// ErrRequestTimeout: Client.Timeout (the whole exchange, body
	// included) expired.
	ErrRequestTimeout error = &TimeoutError{"request"}
)

// ProxyError is returned when an HTTP proxy refuses a CONNECT tunnel.
type ProxyError struct {
	Status int
}

func (e *ProxyError) Error() string {
	return fmt.Sprintf("client: proxy refused CONNECT with status %d", e.Status)
}
