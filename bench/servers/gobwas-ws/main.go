// Command gobwas-ws is the WebSocket benchmark server on gobwas/ws
// (pinned in bench/go.mod) with its low-level API on net/http:
// ws.UpgradeHTTP, then ws.ReadHeader / ws.Cipher / ws.WriteHeader on the
// hijacked connection's buffered reader and writer (net/http's, 4 KiB
// each), one goroutine per connection after the handler returns
// (bench/internal/wsserver for the routes; a broadcast frame is compiled
// once, ws.CompileFrame, and the same bytes written to every member).
//
//	gobwas-ws -addr 127.0.0.1:8080
package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/gobwas/ws"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

// readLimit bounds a frame's payload, as the other servers' defaults do.
const readLimit = 1 << 20

// conn is a hijacked connection with its buffers; mu serialises writers.
type conn struct {
	nc  net.Conn
	r   *bufio.Reader
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte // the last payload, reused
}

var hub wsserver.Hub[*conn]

func main() {
	o := wsserver.ParseFlags("gobwas-ws")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wsserver.ServeHeap(w, r) {
			return
		}
		nc, rw, _, err := ws.UpgradeHTTP(r, w)
		if err != nil {
			return // UpgradeHTTP answered the error
		}
		c := &conn{nc: nc, r: rw.Reader, w: rw.Writer}
		switch r.URL.Path {
		case wsserver.SubscribePath:
			go subscribe(c)
		case wsserver.PublishPath:
			go publish(c)
		default:
			go echo(c)
		}
	})
	srv := &http.Server{Handler: h}
	benchserver.Main(o, srv.Serve, func() { srv.Shutdown(context.Background()) })
}

var errTooLarge = errors.New("frame too large")

// next reads the next data frame into c.buf, answering pings and a close
// itself; it returns the frame's header with the payload unmasked.
func (c *conn) next() (ws.Header, error) {
	for {
		h, err := ws.ReadHeader(c.r)
		if err != nil {
			return h, err
		}
		if h.Length > readLimit {
			return h, errTooLarge
		}
		if int64(cap(c.buf)) < h.Length {
			c.buf = make([]byte, h.Length)
		}
		c.buf = c.buf[:h.Length]
		if _, err := io.ReadFull(c.r, c.buf); err != nil {
			return h, err
		}
		if h.Masked {
			ws.Cipher(c.buf, h.Mask, 0)
			h.Masked = false
		}
		switch h.OpCode {
		case ws.OpClose:
			c.write(ws.Header{Fin: true, OpCode: ws.OpClose, Length: int64(len(c.buf))}, c.buf)
			return h, io.EOF
		case ws.OpPing:
			if err := c.write(ws.Header{Fin: true, OpCode: ws.OpPong, Length: int64(len(c.buf))}, c.buf); err != nil {
				return h, err
			}
		case ws.OpPong:
		default:
			return h, nil
		}
	}
}

func (c *conn) write(h ws.Header, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ws.WriteHeader(c.w, h); err != nil {
		return err
	}
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	return c.w.Flush()
}

func (c *conn) writeRaw(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(frame); err == nil {
		c.w.Flush()
	}
}

func echo(c *conn) {
	defer c.nc.Close()
	for {
		h, err := c.next()
		if err != nil {
			return
		}
		if err := c.write(h, c.buf); err != nil {
			return
		}
	}
}

func subscribe(c *conn) {
	hub.Add(c)
	defer c.nc.Close()
	defer hub.Remove(c)
	for {
		if _, err := c.next(); err != nil {
			return
		}
	}
}

func publish(c *conn) {
	defer c.nc.Close()
	for {
		h, err := c.next()
		if err != nil {
			return
		}
		frame, err := ws.CompileFrame(ws.NewFrame(h.OpCode, true, c.buf))
		if err != nil {
			return
		}
		for _, m := range hub.Members() {
			m.writeRaw(frame)
		}
	}
}
