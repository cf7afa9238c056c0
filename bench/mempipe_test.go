package bench

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// memPipe returns two connected in-memory net.Conns. Unlike net.Pipe, writes
// are buffered (a Write returns once its bytes are queued, like a socket
// with a large send buffer), so a server that writes a response and then
// reads the next request is not forced into lock-step with its client.
func memPipe() (net.Conn, net.Conn) {
	a2b, b2a := newHalf(), newHalf()
	return &memConn{r: b2a, w: a2b}, &memConn{r: a2b, w: b2a}
}

// half is one direction of a memPipe.
type half struct {
	mu       sync.Mutex
	cond     *sync.Cond
	buf      []byte
	off      int
	closed   bool // writer closed: reads drain then EOF
	rclosed  bool // reader closed: writes fail
	deadline time.Time
	timer    *time.Timer
}

func newHalf() *half {
	h := &half{}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *half) read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.off == len(h.buf) {
		switch {
		case h.rclosed:
			return 0, net.ErrClosed
		case h.closed:
			return 0, io.EOF
		case !h.deadline.IsZero() && !time.Now().Before(h.deadline):
			return 0, os.ErrDeadlineExceeded
		}
		h.cond.Wait()
	}
	n := copy(p, h.buf[h.off:])
	h.off += n
	if h.off == len(h.buf) {
		h.buf, h.off = h.buf[:0], 0
	}
	return n, nil
}

func (h *half) write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.rclosed {
		return 0, net.ErrClosed
	}
	h.buf = append(h.buf, p...)
	h.cond.Broadcast()
	return len(p), nil
}

func (h *half) setDeadline(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadline = t
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	if !t.IsZero() {
		h.timer = time.AfterFunc(time.Until(t), func() {
			h.mu.Lock()
			h.cond.Broadcast()
			h.mu.Unlock()
		})
	}
	h.cond.Broadcast()
}

func (h *half) closeWrite() {
	h.mu.Lock()
	h.closed = true
	h.cond.Broadcast()
	h.mu.Unlock()
}

func (h *half) closeRead() {
	h.mu.Lock()
	h.rclosed = true
	h.cond.Broadcast()
	h.mu.Unlock()
}

// memConn is one end of a memPipe.
type memConn struct {
	r, w *half
	once sync.Once
}

func (c *memConn) Read(p []byte) (int, error)  { return c.r.read(p) }
func (c *memConn) Write(p []byte) (int, error) { return c.w.write(p) }
func (c *memConn) Close() error {
	c.once.Do(func() { c.w.closeWrite(); c.r.closeRead() })
	return nil
}
func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }
func (c *memConn) SetDeadline(t time.Time) error {
	c.r.setDeadline(t)
	return nil
}
func (c *memConn) SetReadDeadline(t time.Time) error { c.r.setDeadline(t); return nil }
func (c *memConn) SetWriteDeadline(time.Time) error  { return nil } // writes never block
