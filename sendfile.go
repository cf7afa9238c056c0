package riptide

import (
	"errors"
	"io"
	"os"
	"slices"
)

// ErrShortFile is returned by SendFile when the file ended before the
// section did: the response head already announced the length, so the
// connection is closed after what was sent.
var ErrShortFile = errors.New("riptide: file shorter than the section to send")

// sendFileCopyBuf is the size of the buffer SendFile copies through when
// the kernel cannot move the bytes (TLS, HTTP/2, other systems).
const sendFileCopyBuf = 32 << 10

// SendFile sends n bytes of the regular file f, starting at offset, as the
// response body or the next part of it, and returns how many were sent.
// If the response is not committed yet it is committed now, declaring
// Content-Length: n unless a length was declared before or body bytes are
// buffered (a multipart body written around file sections, say, which is
// then chunked unless its total length was declared with
// SetContentLength).
//
// On a plain TCP connection served over HTTP/1.1 (either engine, on
// Linux) the head goes out first and the bytes go from the page cache to
// the socket with sendfile(2), read at offset without moving f's file
// offset, so one *os.File may be served by many connections at once. Over
// TLS, HTTP/2 (DATA frames) and on other systems the section is read with
// ReadAt and written as the body. Nothing is sent for HEAD (n is returned).
//
// f must stay open until SendFile returns: it works on f's descriptor, so
// closing f from another goroutine during the call may send another file's
// bytes. If f turns out shorter than offset+n, the result is ErrShortFile
// and the connection closes after the bytes sent. While a BodyFilter is set
// (see SetBodyFilter) the section is read and written through the filter
// instead, with no Content-Length declared.
func (x *Ctx) SendFile(f *os.File, offset, n int64) (int64, error) {
	r := &x.resp
	c := x.conn
	switch {
	case c.hijacked:
		return 0, ErrHijacked
	case c.werr != nil:
		return 0, c.werr
	case offset < 0 || n < 0:
		return 0, os.ErrInvalid
	}
	r.wrote = true
	if x.filter != nil {
		// A body filter (compression, say) must see these bytes like any
		// other body bytes, and in order after what it holds: copy
		// through it, with no length declared for the filtered body.
		return x.copyFile(f, offset, n, x.filterWrite)
	}
	if !r.committed {
		if r.clen < 0 && len(r.body) == 0 {
			r.clen = n
		}
		x.commit(true)
	}
	switch {
	case r.finished:
		return 0, ErrCommitted
	case r.noBody || n == 0:
		return n, nil
	case r.clen >= 0 && r.written+n > r.clen:
		return 0, ErrContentLength
	}
	sent, handled, err := c.ex.sendFile(f, offset, n)
	if !handled {
		return x.copyFile(f, offset, n, x.writeCommitted)
	}
	r.written += sent
	if err == nil && sent < n {
		err = ErrShortFile
	}
	if err != nil {
		// The head announced bytes that will not come: nothing more may
		// be written on this connection.
		c.failWrite(err)
		c.closeAfter = true
	}
	return sent, err
}

// writeRaw writes p to the socket after whatever is buffered, with no
// framing.
func (c *conn) writeRaw(p []byte) (int, error) {
	if err := c.writeDirect(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// copyFile sends a section of f through write, reading it into the Ctx's
// scratch buffer (kept with the connection, so this does not allocate
// after the first use).
func (x *Ctx) copyFile(f *os.File, offset, n int64, write func([]byte) (int, error)) (int64, error) {
	start := len(x.scratch)
	x.scratch = slices.Grow(x.scratch, sendFileCopyBuf)
	return copyFileAt(f, offset, n, x.scratch[start:start+sendFileCopyBuf], write)
}

// copyFileAt sends n bytes of f from offset through write, read with
// ReadAt into buf; ErrShortFile when f ends first.
func copyFileAt(f *os.File, offset, n int64, buf []byte, write func([]byte) (int, error)) (int64, error) {
	if len(buf) == 0 {
		buf = make([]byte, sendFileCopyBuf)
	}
	var sent int64
	for sent < n {
		k, err := f.ReadAt(buf[:min(n-sent, int64(len(buf)))], offset+sent)
		if k > 0 {
			m, werr := write(buf[:k])
			sent += int64(m)
			if werr != nil {
				return sent, werr
			}
		}
		if err == io.EOF && k == 0 {
			return sent, ErrShortFile
		}
		if err != nil && err != io.EOF {
			return sent, err
		}
	}
	return sent, nil
}
