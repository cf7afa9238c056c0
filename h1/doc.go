// Package h1 is riptide's sans-I/O HTTP/1.1 codec.
//
// It parses and serialises HTTP/1.1 messages in caller-owned byte slices and
// knows nothing of sockets, goroutines or io.Reader: the server engine, the
// client and the fuzzers all drive the same code. Parsed fields are slices
// into the caller's buffer, so parsing copies nothing and, in the common case,
// allocates nothing.
//
// A server reads bytes into a buffer and calls [Request.Parse] until it stops
// returning [ErrNeedMore]:
//
//	var req h1.Request
//	n, err := req.Parse(buf, &limits)
//	switch {
//	case err == h1.ErrNeedMore: // read more bytes into buf, call again
//	case err != nil:            // reply h1.StatusOf(err), close the connection
//	default:                    // buf[:n] is the head; the body follows per req.ContentLength / req.Chunked
//	}
//
// The parser is strict: it follows RFC 9112 and RFC 9110 and rejects what
// lenient parsers accept and request smugglers rely on (bare LF, obs-fold,
// whitespace before the colon, conflicting Content-Length, Transfer-Encoding
// with Content-Length, chunked not final, invalid Host). Every rejection is a
// named *[Error] carrying the status code a server should answer with.
package h1
