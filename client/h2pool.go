package client

import (
	"context"
	"slices"
	"time"
)

// HTTP/2 in the host pool: an origin known to speak HTTP/2 (its server
// picked "h2" in ALPN, or it is listed in Client.H2CHosts) keeps its
// HTTP/2 connections in hostPool.h2s; each request takes a stream slot on
// the first one with room, and a new connection is dialed (one dial at a
// time per origin) only when every one is at the server's
// SETTINGS_MAX_CONCURRENT_STREAMS, or gone away. HTTP/2 connections hold
// their slots of MaxConnsPerHost like HTTP/1.1 ones.

// acquire returns what carries one exchange: an HTTP/2 connection with a
// stream slot reserved when the origin speaks HTTP/2, else an HTTP/1.1
// connection.
func (p *hostPool) acquire(ctx context.Context, deadline time.Time) (*conn, *h2Conn, error) {
	for {
		dialing := false
		if p.h2mode.Load() {
			hc, wait := p.pickH2()
			if hc != nil {
				return nil, hc, nil
			}
			if wait != nil {
				if err := waitChan(ctx, deadline, wait); err != nil {
					return nil, nil, err
				}
				continue
			}
			dialing = true
		}
		cn, err := p.get(ctx, deadline)
		if err != nil {
			if dialing {
				p.dialedH2(nil)
			}
			return nil, nil, err
		}
		if cn.reused || !p.h2c && (cn.tls == nil || cn.tls.NegotiatedProtocol != "h2") {
			if dialing {
				p.dialedH2(nil)
			}
			return cn, nil, nil
		}
		hc := newH2Conn(p, cn.nc, cn.tls)
		hc.reserve()
		p.dialedH2(hc)
		return nil, hc, nil
	}
}

// pickH2 reserves a stream on an HTTP/2 connection of the pool; with none
// free it returns a channel closed when the dial in progress ends or a new
// connection has the server's settings, or nil, nil when the caller is to
// dial (the dial is then in progress).
func (p *hostPool) pickH2() (*h2Conn, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pending chan struct{}
	for _, hc := range p.h2s {
		ok, wait := hc.tryReserve()
		if ok {
			return hc, nil
		}
		if wait != nil {
			pending = wait
		}
	}
	if pending != nil {
		// A new connection will tell how many streams it takes.
		return nil, pending
	}
	if p.h2dial != nil {
		return nil, p.h2dial
	}
	p.h2dial = make(chan struct{})
	return nil, nil
}

// dialedH2 ends the dial in progress, adding hc (nil when it failed).
func (p *hostPool) dialedH2(hc *h2Conn) {
	p.mu.Lock()
	if hc != nil {
		p.h2s = append(p.h2s, hc)
		p.h2mode.Store(true)
	}
	if p.h2dial != nil {
		close(p.h2dial)
		p.h2dial = nil
	}
	p.mu.Unlock()
}

// dropH2 removes hc from the pool: it went away or ended.
func (p *hostPool) dropH2(hc *h2Conn) {
	p.mu.Lock()
	if i := slices.Index(p.h2s, hc); i >= 0 {
		p.h2s = slices.Delete(p.h2s, i, i+1)
	}
	p.mu.Unlock()
}

// closeIdleH2 closes the HTTP/2 connections that carry no stream.
func (p *hostPool) closeIdleH2() {
	p.mu.Lock()
	hs := slices.Clone(p.h2s)
	p.mu.Unlock()
	for _, hc := range hs {
		hc.mu.Lock()
		idle := hc.active == 0
		hc.mu.Unlock()
		if idle {
			hc.close(errH2Idle)
		}
	}
}

// waitChan waits for ch to be closed, the context or the deadline.
func waitChan(ctx context.Context, deadline time.Time, ch chan struct{}) error {
	var tc <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-tc:
		return deadlineErr(ctx, deadline)
	}
}

// h2Exchange runs one exchange over HTTP/2 on hc, and the retries it
// allows on other HTTP/2 connections of the pool.
func (c *Client) h2Exchange(ctx context.Context, p *hostPool, hc *h2Conn, req *Request, resp *Response, deadline time.Time, stream bool) error {
	for attempt := 0; ; attempt++ {
		retry, err := hc.exchange(ctx, req, resp, deadline, stream)
		if err == nil {
			return nil
		}
		if !retry || attempt >= c.maxRetries() || ctx.Err() != nil {
			return err
		}
		resp.Reset()
		cn, nhc, err := p.acquire(ctx, deadline)
		if err != nil {
			return err
		}
		if cn != nil {
			// The origin went back to HTTP/1.1.
			_, err := cn.exchange(ctx, req, resp, deadline, stream)
			return err
		}
		hc = nhc
	}
}
