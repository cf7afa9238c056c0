package riptide

import "github.com/riptide-http/riptide/h1"

// The server's own answer to a request no handler sees (a head the
// parser or a limit refuses, a body over MaxRequestBodySize, a target
// net/url refuses, a connection over MaxConns): the same on every
// protocol and for both doors. Its status is the refusal's, its body the
// status's reason phrase and a newline, as text/plain, and the connection
// closes after it (on HTTP/1.1; an HTTP/2 stream just ends).

// cannedType is the Content-Type of a canned answer.
const cannedType = "text/plain; charset=utf-8"

// cannedBodyLen is the length of code's canned body.
func cannedBodyLen(code int) int { return len(h1.StatusText(code)) + 1 }

// appendCannedBody appends code's canned body to dst.
func appendCannedBody(dst []byte, code int) []byte {
	return append(append(dst, h1.StatusText(code)...), '\n')
}

// canned answers code through the Ctx's response, and so through its
// exchange, whatever the protocol: for a request refused before its
// handler runs (HTTP/2), or by the compat door before the net/http
// handler runs. conn.writeCanned is the same answer written straight into
// an HTTP/1.1 connection's buffer, for a request that has no Ctx yet.
func (x *Ctx) canned(code int) {
	x.SetStatus(code)
	x.SetContentType(cannedType)
	x.SetClose()
	x.WriteString(h1.StatusText(code))
	x.WriteString("\n")
}
