package riptide

// SetBodyLimit lowers the request body limit to n bytes for this request
// (Server.MaxRequestBodySize still applies where it is lower). A body
// declared longer, or a chunked body that grows longer, fails its reads
// with ErrBodyTooLarge, and the connection closes after the response; a
// handler that then answers nothing sends 413. Call it before reading the
// body; n <= 0 is ignored.
func (x *Ctx) SetBodyLimit(n int64) {
	b := &x.conn.body
	if n <= 0 || b.limit > 0 && b.limit <= n {
		return
	}
	b.limit = n
	if b.err == nil && (b.read > n || !b.chunked && b.read+b.remaining > n) {
		b.tooLarge()
	}
}
