package riptide

import (
	"errors"
	"os"

	"github.com/riptide-http/riptide/h1"
)

// The HTTP/1.1 connection as the exchange of its responses: it encodes
// the head Ctx.outHead decided as lines into wbuf, frames the body as
// the head says (chunks, or raw), and moves the bytes to the socket. The
// Ctx has admitted and counted every body byte it is given.

// writeHead appends the status line, the header lines and the framing to
// wbuf, then the body.
func (c *conn) writeHead(h *outHead, body []byte, _ bool) error {
	c.wmark, c.sent = len(c.wbuf), false
	w := appendStatusLine(c.wbuf, h.status)
	w = h.hdr.appendLines(w)
	w = c.appendServerLines(w, h)
	c.chunked = false
	switch h.mode {
	case h1.BodyLength:
		w = h1.AppendContentLength(w, h.length)
	case h1.BodyChunked:
		w = append(w, "Transfer-Encoding: chunked\r\n"...)
		c.chunked = true
	}
	switch {
	case h.close:
		w = append(w, "Connection: close\r\n"...)
	case h.keepAlive:
		w = append(w, "Connection: keep-alive\r\n"...)
	}
	c.wbuf = append(w, '\r', '\n')
	if len(body) == 0 {
		return nil
	}
	return c.writeBody(body)
}

// writeBody appends p to wbuf, as a chunk when the body is chunked, or
// writes it straight to the socket when large.
func (c *conn) writeBody(p []byte) error {
	if c.chunked {
		c.wbuf = h1.AppendChunkHeader(c.wbuf, len(p))
		if len(p) >= c.cfg.writeBuf {
			if err := c.writeDirect(p); err != nil {
				return err
			}
		} else {
			c.wbuf = append(c.wbuf, p...)
		}
		c.wbuf = append(c.wbuf, '\r', '\n')
	} else if len(p) >= c.cfg.writeBuf {
		return c.writeDirect(p)
	} else {
		c.wbuf = append(c.wbuf, p...)
	}
	if len(c.wbuf) >= c.cfg.writeBuf {
		return c.flush()
	}
	return nil
}

// sendFile sends the file section with sendfile(2) on a plain TCP socket
// (either engine): the head and what else is buffered go first, held by
// the kernel to leave with the file's first bytes (flushMore), then the
// section, as one chunk when the body is chunked. A file the kernel
// refuses before any byte went out is copied through wbuf's spare room.
func (c *conn) sendFile(f *os.File, offset, n int64) (int64, bool, error) {
	if !c.canSendfile() {
		return 0, false, nil
	}
	if c.chunked {
		c.wbuf = h1.AppendChunkHeader(c.wbuf, int(n))
	}
	if err := c.flushMore(); err != nil {
		return 0, true, err
	}
	c.armWrite()
	c.sent = true
	sent, handled, err := c.sendFileAt(f, offset, n)
	c.nout += uint64(sent)
	if !handled && err == nil {
		// Unframed: the chunk header, if any, is out already. wbuf is
		// empty after flushMore.
		var m int64
		m, err = copyFileAt(f, offset, n, c.wbuf[:cap(c.wbuf)], c.writeRaw)
		sent += m
	}
	if err == nil && sent == n && c.chunked {
		c.wbuf = append(c.wbuf, '\r', '\n')
	}
	return sent, true, err
}

// endStream ends the body: the last chunk and the trailers; a response
// that must not look complete cuts the connection instead (a short body
// once it is out, a chunked one at once, before its last chunk).
func (c *conn) endStream(trl *headerFields, reset bool) {
	switch {
	case reset && c.chunked:
		// Cannot report the error any more: send what is pending (earlier
		// pipelined responses, this body without its last chunk) and cut
		// the connection so the client sees the body incomplete.
		c.closeAfter = true
		c.flush()
		c.werr = errBadTrailer
	case c.chunked:
		c.wbuf = append(c.wbuf, '0', '\r', '\n')
		c.wbuf = trl.appendLines(c.wbuf)
		c.wbuf = append(c.wbuf, '\r', '\n')
	case reset:
		// The client would wait for the rest forever.
		c.closeAfter = true
	}
}

var errBadTrailer = errors.New("riptide: invalid trailer")

// writeInformational sends a 1xx head at once.
func (c *conn) writeInformational(h *outHead) error {
	c.wbuf = h1.AppendStatusLine(c.wbuf, h.status)
	c.wbuf = h.hdr.appendLines(c.wbuf)
	c.wbuf = append(c.wbuf, '\r', '\n')
	return c.flush()
}
