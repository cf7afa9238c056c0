package client

import (
	"context"
	"sync"
	"time"
)

// pipeState coordinates HTTP/1.1 pipelining on one connection: writers
// take tickets in the order their requests go out, and each reads its
// response when the ticket's turn comes, since responses arrive in request
// order (RFC 9112 §9.3.2).
type pipeState struct {
	wmu  sync.Mutex // serialises request writes and ticket numbers
	next uint64     // ticket of the next request written

	mu   sync.Mutex
	cond sync.Cond // signalled when turn advances or the connection fails
	turn uint64    // ticket whose response is read next
	err  error     // set once the connection failed

	inflight int // under hostPool.mu: requests assigned to the connection
}

// getPipe returns a pipelined connection with room for one more request:
// the least loaded open one, a new one when all are full and the host limit
// allows, or waits. Whether the connection is quiet is checked when the
// request is written (pipeExchange).
func (p *hostPool) getPipe(ctx context.Context, deadline time.Time) (*conn, error) {
	depth := p.c.Pipeline
	for {
		p.mu.Lock()
		var best *conn
		for _, c := range p.pipes {
			if c.pipe.inflight < depth && (best == nil || c.pipe.inflight < best.pipe.inflight) {
				best = c
			}
		}
		if best != nil && best.pipe.inflight == 0 && time.Since(best.idleAt) > p.idleTimeout() {
			// Idle for too long: drop it.
			p.removePipe(best)
			p.mu.Unlock()
			p.closePipe(best)
			continue
		}
		if best != nil && (best.pipe.inflight == 0 || !p.canDial()) {
			best.pipe.inflight++
			p.mu.Unlock()
			return best, nil
		}
		if p.canDial() {
			p.total++
			p.pipeConns++
			p.mu.Unlock()
			c, err := p.dialCounted(ctx, deadline)
			if err != nil {
				p.mu.Lock()
				p.pipeConns--
				p.mu.Unlock()
				return nil, err
			}
			c.pipe = &pipeState{inflight: 1}
			c.pipe.cond.L = &c.pipe.mu
			p.mu.Lock()
			p.pipes = append(p.pipes, c)
			p.mu.Unlock()
			return c, nil
		}
		if n := len(p.idle); n > 0 && p.c.MaxConnsPerHost > 0 {
			// The host's slots are held by idle connections of the
			// non-pipelined APIs: close the oldest to free one.
			c := p.idle[0]
			copy(p.idle, p.idle[1:])
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			p.closeConn(c)
			continue
		}
		if p.pipeFree == nil {
			p.pipeFree = make(chan struct{}, 1)
		}
		free := p.pipeFree
		p.mu.Unlock()
		var timeout <-chan time.Time
		if !deadline.IsZero() {
			t := time.NewTimer(time.Until(deadline))
			timeout = t.C
			defer t.Stop()
		}
		select {
		case <-free:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, deadlineErr(ctx, deadline)
		}
	}
}

// canDial reports whether another pipelined connection may be opened
// (p.mu held). Pipelining without MaxConnsPerHost uses one connection
// (besides those of DoStream and RoundTrip).
func (p *hostPool) canDial() bool {
	if max := p.c.MaxConnsPerHost; max > 0 {
		return p.total < max
	}
	return p.pipeConns == 0
}

// closePipe closes a pipelined connection that no request uses, after
// removePipe.
func (p *hostPool) closePipe(c *conn) {
	c.pipe.mu.Lock()
	c.pipe.err = ErrServerClosed
	c.pipe.mu.Unlock()
	p.closeConn(c)
}

// signalPipeFree wakes one getPipe waiter (p.mu held).
func (p *hostPool) signalPipeFree() {
	if p.pipeFree != nil {
		select {
		case p.pipeFree <- struct{}{}:
		default:
		}
	}
}

// pipeExchange writes req in ticket order, waits for its turn and reads
// the response. Requests written but not answered because the connection
// failed are reported retryable: only idempotent requests are pipelined.
// A request that finds the connection failed, or (with no response
// outstanding) not quiet, is not written and fails with errNotSent.
func (c *conn) pipeExchange(ctx context.Context, req *Request, resp *Response, deadline, hdr time.Time) (bool, error) {
	ps := c.pipe
	ps.wmu.Lock()
	ps.mu.Lock()
	err := ps.err
	// With every response read, no reader touches the buffer and whatever
	// is buffered or arrives is unsolicited. A new connection is not
	// checked: bytes there can only be the server's answer to this request.
	idle := ps.turn == ps.next && c.reused
	ps.mu.Unlock()
	if err != nil {
		ps.wmu.Unlock()
		c.p.pipeDone(c)
		return true, errNotSent
	}
	if idle && !c.quiet() {
		ps.wmu.Unlock()
		ps.fail(c)
		return true, errNotSent
	}
	ticket := ps.next
	ps.next++
	c.nc.SetWriteDeadline(deadline)
	w := c.appendHead(c.wbuf[:0], req)
	if len(req.body) <= inlineBodyMax {
		w = append(w, req.body...)
	}
	c.wbuf = w[:0]
	err = c.write(w)
	if err == nil && len(req.body) > inlineBodyMax {
		err = c.write(req.body)
	}
	ps.wmu.Unlock()

	ps.mu.Lock()
	for ps.turn != ticket && ps.err == nil {
		ps.cond.Wait()
	}
	failed := ps.err
	ps.mu.Unlock()
	if failed != nil {
		// The connection failed before our turn: our request was not
		// answered.
		c.p.pipeDone(c)
		return true, failed
	}
	if err != nil {
		// Our turn came with a failed write: fail the connection for the
		// requests behind us.
		ps.fail(c)
		return true, err
	}
	// Our turn: this goroutine alone reads the connection until release.
	c.got = false
	c.i1xx = interims{}
	c.deadline = deadline
	c.hdrTimeout = !hdr.IsZero() && (deadline.IsZero() || hdr.Before(deadline))
	c.setReadDeadline(readDeadline(deadline, hdr))
	if err := c.watch(ctx); err != nil {
		c.discard()
		return true, err
	}
	return c.readResponse(req, resp, deadline, true, false)
}

// readDone passes the read turn to the next request (the exchange ended
// cleanly).
func (ps *pipeState) readDone(c *conn) {
	ps.mu.Lock()
	ps.turn++
	ps.cond.Broadcast()
	ps.mu.Unlock()
	c.p.pipeDone(c)
}

// fail marks the connection failed, wakes every waiting request and closes
// it; they report a retryable error. The connection leaves the pool first,
// so that retries cannot pick it again.
func (ps *pipeState) fail(c *conn) {
	p := c.p
	p.mu.Lock()
	p.removePipe(c)
	p.mu.Unlock()
	ps.mu.Lock()
	first := ps.err == nil
	if first {
		ps.err = ErrServerClosed
	}
	ps.cond.Broadcast()
	ps.mu.Unlock()
	if first {
		c.nc.Close()
		p.releaseSlot()
	}
	p.pipeDone(c)
}

// removePipe removes c from the pipelined connections (p.mu held). It
// reports false if c was no longer listed.
func (p *hostPool) removePipe(c *conn) bool {
	for i, pc := range p.pipes {
		if pc == c {
			p.pipes = append(p.pipes[:i], p.pipes[i+1:]...)
			p.pipeConns--
			return true
		}
	}
	return false
}

// pipeDone ends one request's use of a pipelined connection. A connection
// left idle while non-pipelined requests wait for a slot (get) is closed to
// give them its slot.
func (p *hostPool) pipeDone(c *conn) {
	p.mu.Lock()
	c.idleAt = time.Now()
	c.pipe.inflight--
	evict := c.pipe.inflight == 0 && len(p.waiters) > 0 && p.removePipe(c)
	p.signalPipeFree()
	p.mu.Unlock()
	if evict {
		p.closePipe(c)
	}
}

// idlePipe removes and returns a pipelined connection no request uses, or
// nil (p.mu held).
func (p *hostPool) idlePipe() *conn {
	for _, c := range p.pipes {
		if c.pipe.inflight == 0 {
			p.removePipe(c)
			return c
		}
	}
	return nil
}
