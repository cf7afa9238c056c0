package websocket

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/riptide-http/riptide/ws"
)

// byteConn is a net.Conn that reads a fixed input and discards writes.
type byteConn struct {
	bytes.Reader
	net.Conn // nil: only the methods below are called
}

func (c *byteConn) Read(p []byte) (int, error)       { return c.Reader.Read(p) }
func (c *byteConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *byteConn) Close() error                     { return nil }
func (c *byteConn) SetDeadline(time.Time) error      { return nil }
func (c *byteConn) SetReadDeadline(time.Time) error  { return nil }
func (c *byteConn) SetWriteDeadline(time.Time) error { return nil }
func (c *byteConn) LocalAddr() net.Addr              { return nil }
func (c *byteConn) RemoteAddr() net.Addr             { return nil }

// FuzzServerRead feeds arbitrary bytes to a server Conn (permessage-deflate
// with takeover on when the first input byte is odd, a 64 KiB limit):
// reading ends with an error and never panics, hangs or returns a message
// over the limit.
func FuzzServerRead(f *testing.F) {
	masked := func(h ws.Header, p []byte) []byte {
		h.Masked, h.Key, h.Length = true, [4]byte{1, 2, 3, 4}, int64(len(p))
		q := append([]byte(nil), p...)
		ws.Mask(h.Key, 0, q)
		return append(ws.AppendHeader(nil, h), q...)
	}
	var z ws.Compressor
	hello, _ := z.Compress(nil, []byte("hello hello hello"))
	f.Add(append([]byte{1}, masked(ws.Header{Fin: true, Op: ws.OpText}, []byte("hi"))...))
	f.Add(append([]byte{1}, masked(ws.Header{Fin: true, Op: ws.OpBinary, RSV: ws.RSV1}, hello)...))
	f.Add(append(append([]byte{0}, masked(ws.Header{Op: ws.OpText}, []byte("a"))...),
		append(masked(ws.Header{Fin: true, Op: ws.OpPing}, []byte("p")), masked(ws.Header{Fin: true, Op: ws.OpContinuation}, []byte("b"))...)...))
	f.Add(append([]byte{0}, masked(ws.Header{Fin: true, Op: ws.OpClose}, []byte{0x03, 0xe8})...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		var deflate *ws.DeflateParams
		if in[0]&1 == 1 {
			deflate = &ws.DeflateParams{}
		}
		nc := &byteConn{}
		nc.Reset(in[1:])
		c := newConn(nc, false, nil, &Options{ReadLimit: 64 << 10}, "", deflate)
		for range len(in) + 1 {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if len(msg) > 64<<10 {
				t.Fatalf("message of %d bytes over the 64 KiB limit", len(msg))
			}
		}
		t.Fatalf("%d messages from %d bytes", len(in)+1, len(in))
	})
}
