package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hostPool holds the connections to one origin (scheme and authority).
type hostPool struct {
	c         *Client
	https     bool
	authority string // host[:port] as in the URL
	addr      string // host:port to dial for the origin
	hostname  string // host without port or brackets, for SNI
	tlsConf   *tls.Config
	proxy     *url.URL // HTTP(S) proxy, nil for none (proxy.go)
	socks     *url.URL // SOCKS5 proxy, nil for none
	proxyErr  error    // from ProxyFunc, or a proxy URL the client cannot use

	mu        sync.Mutex
	idle      []*conn // LIFO: the most recently used is reused first
	total     int     // open and dialing connections
	waiters   []chan *conn
	reapArmed bool
	pipes     []*conn // pipelined connections (Client.Pipeline > 1)
	pipeConns int     // pipelined connections, open or dialing
	pipeFree  chan struct{}
	proxyAuth string // Proxy-Authorization for plain-HTTP proxying

	h2c    bool          // HTTP/2 with prior knowledge (Client.H2CHosts)
	h2mode atomic.Bool   // the origin speaks HTTP/2 (h2pool.go)
	h2s    []*h2Conn     // its HTTP/2 connections, under mu
	h2dial chan struct{} // closed when the HTTP/2 dial in progress ends
}

func newHostPool(c *Client, https bool, authority string) *hostPool {
	p := &hostPool{c: c, https: https, authority: authority}
	p.setProxy()
	host, port := splitAuthority(authority)
	if port == "" {
		port = "80"
		if https {
			port = "443"
		}
	}
	p.hostname = host
	p.addr = net.JoinHostPort(host, port)
	if https {
		cfg := &tls.Config{}
		if c.TLSConfig != nil {
			cfg = c.TLSConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"http/1.1"}
			if !c.DisableHTTP2 {
				cfg.NextProtos = []string{"h2", "http/1.1"}
			}
		}
		p.tlsConf = cfg
	} else {
		p.h2c = p.proxy == nil && slices.Contains(c.H2CHosts, authority)
		p.h2mode.Store(p.h2c)
	}
	return p
}

// splitAuthority splits host[:port] (host possibly a bracketed IPv6
// literal) into the host, without brackets, and the port.
func splitAuthority(authority string) (host, port string) {
	host = authority
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host, port = authority[:i], authority[i+1:]
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), port
}

func (p *hostPool) maxConns() int { return p.c.MaxConnsPerHost }

func (p *hostPool) maxIdle() int {
	if n := p.c.MaxIdleConnsPerHost; n > 0 {
		return n
	}
	return DefaultMaxIdleConnsPerHost
}

func (p *hostPool) idleTimeout() time.Duration {
	if d := p.c.IdleTimeout; d > 0 {
		return d
	}
	return DefaultIdleTimeout
}

// get returns an idle connection that has not expired (the exchange checks
// its socket, see conn.usable), or dials a new one if the host is below
// MaxConnsPerHost, or waits for one to be released.
func (p *hostPool) get(ctx context.Context, deadline time.Time) (*conn, error) {
	for {
		p.mu.Lock()
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			if !c.usable(p.idleTimeout()) {
				p.closeConn(c)
				continue
			}
			return c, nil
		}
		if max := p.maxConns(); max <= 0 || p.total < max {
			p.total++
			p.mu.Unlock()
			return p.dialCounted(ctx, deadline)
		}
		if c := p.idlePipe(); c != nil {
			// An idle pipelined connection holds the slot: free it.
			p.mu.Unlock()
			p.closePipe(c)
			continue
		}
		c, err := p.wait(ctx, deadline)
		if err != nil || c != nil {
			return c, err
		}
		// A slot was freed for us: dial.
		return p.dialCounted(ctx, deadline)
	}
}

// usable reports whether an idle connection may carry a request as far as
// can be told without a system call: it has not been idle too long and
// holds no unsolicited bytes. The socket itself is checked by the exchange,
// right before the request is written (see conn.exchange and quiet).
func (c *conn) usable(idleTimeout time.Duration) bool {
	return time.Since(c.idleAt) <= idleTimeout && c.r == c.w
}

// quiet reports whether a connection between exchanges may carry a
// request: it holds no unsolicited bytes and the server has neither sent
// any nor closed it since (one non-blocking peek, before anything is
// written). It runs before every reuse, however soon: bytes that arrived
// while no request was outstanding could only be read as the answer to the
// next request, so they retire the connection (net/http: "Unsolicited
// response received on idle HTTP channel"). Bytes that arrive after the
// request went out cannot be told from its response, by any HTTP/1.1
// client; they are then found at the next reuse, which ends the
// connection's run.
func (c *conn) quiet() bool {
	return c.r == c.w && c.tlsQuiet() && c.live.alive()
}

// tlsQuiet reports whether the TLS layer of an https connection holds no
// bytes for the client: a record read together with the last response can
// leave plaintext there, out of sight of the socket peek. A read with an
// expired deadline returns such bytes at once, and otherwise fails before
// reaching the socket (a timeout does not break a tls.Conn).
func (c *conn) tlsQuiet() bool {
	if c.tls == nil {
		return true
	}
	c.dl = true // the next exchange sets the deadline again
	c.nc.SetReadDeadline(aLongTimeAgo)
	n, err := c.nc.Read(c.rbuf[:1]) // c.r == c.w: nothing unread is overwritten
	return n == 0 && errors.Is(err, os.ErrDeadlineExceeded)
}

// wait queues for a connection; called with p.mu held, returns with it
// released. It returns a handed-over connection, or nil when a dial slot
// was granted (p.total already counts it).
func (p *hostPool) wait(ctx context.Context, deadline time.Time) (*conn, error) {
	ch := make(chan *conn, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case c := <-ch:
		return c, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timeout:
		err = deadlineErr(ctx, deadline)
	}
	p.mu.Lock()
	for i, w := range p.waiters {
		if w == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.mu.Unlock()
			return nil, err
		}
	}
	p.mu.Unlock()
	// Someone handed us a connection or a slot as we gave up: pass it on.
	if c := <-ch; c != nil {
		p.put(c)
	} else {
		p.releaseSlot()
	}
	return nil, err
}

// deadlineErr returns the error for an expired exchange deadline: the
// context's error when the deadline was the context's, else
// ErrRequestTimeout (Client.Timeout).
func deadlineErr(ctx context.Context, deadline time.Time) error {
	if d, ok := ctx.Deadline(); ok && !d.After(deadline) {
		return context.DeadlineExceeded
	}
	return ErrRequestTimeout
}

// dialCounted dials a connection whose slot is already counted in p.total.
func (p *hostPool) dialCounted(ctx context.Context, deadline time.Time) (*conn, error) {
	c, err := p.dial(ctx, deadline)
	if err != nil {
		p.releaseSlot()
		return nil, err
	}
	return c, nil
}

// put returns a healthy connection after an exchange: to a waiter, to the
// idle list, or closed when the idle list is full.
func (p *hostPool) put(c *conn) {
	c.idleAt = time.Now()
	p.mu.Lock()
	if len(p.waiters) > 0 {
		ch := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		ch <- c
		return
	}
	if len(p.idle) >= p.maxIdle() {
		p.mu.Unlock()
		p.closeConn(c)
		return
	}
	p.idle = append(p.idle, c)
	p.signalPipeFree() // a pipelined request may want its slot
	if !p.reapArmed {
		p.reapArmed = true
		time.AfterFunc(p.idleTimeout(), p.reap)
	}
	p.mu.Unlock()
}

// closeConn closes c and frees its slot.
func (p *hostPool) closeConn(c *conn) {
	c.nc.Close()
	p.releaseSlot()
}

// releaseSlot frees one connection slot, granting it to a waiter if any.
func (p *hostPool) releaseSlot() {
	p.mu.Lock()
	if len(p.waiters) > 0 {
		ch := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		ch <- nil
		return
	}
	p.total--
	p.signalPipeFree()
	p.mu.Unlock()
}

// reap closes connections idle for longer than the idle timeout. It runs
// from a timer while the pool has idle connections.
func (p *hostPool) reap() {
	timeout := p.idleTimeout()
	now := time.Now()
	p.mu.Lock()
	var old []*conn
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= timeout {
		n++
	}
	if n > 0 {
		old = append(old, p.idle[:n]...)
		k := copy(p.idle, p.idle[n:])
		clear(p.idle[k:])
		p.idle = p.idle[:k]
	}
	if len(p.idle) > 0 {
		next := timeout - now.Sub(p.idle[0].idleAt)
		time.AfterFunc(next, p.reap)
	} else {
		p.reapArmed = false
	}
	p.mu.Unlock()
	for _, c := range old {
		p.closeConn(c)
	}
}

// closeIdle closes every idle connection, pipelined ones included.
func (p *hostPool) closeIdle() {
	p.mu.Lock()
	old := p.idle
	p.idle = nil
	var pipes []*conn
	for c := p.idlePipe(); c != nil; c = p.idlePipe() {
		pipes = append(pipes, c)
	}
	p.mu.Unlock()
	for _, c := range old {
		p.closeConn(c)
	}
	for _, c := range pipes {
		p.closePipe(c)
	}
}

// stats reports the open and idle connection counts (for tests).
func (p *hostPool) stats() (total, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, len(p.idle)
}
