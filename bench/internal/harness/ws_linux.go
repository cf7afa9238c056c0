package harness

// The lean WebSocket client on Linux: the upgraded connections leave the
// net package (their descriptors duplicated, the net.Conns closed, so Go's
// netpoller no longer watches them) and a few goroutines, one per CPU the
// harness may run on, each drive a share of them from an epoll instance of
// their own: per echoed message one write(2) of the prebuilt masked frame
// and one read(2) into the goroutine's 64 KiB buffer, compared in place;
// no goroutine switch, no allocation, and epoll_wait(2) once per batch of
// ready connections. So the client costs less per message than the
// servers it measures, which then bound the run.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// wsEpollClient says that this system has the epoll client.
const wsEpollClient = true

const wsEpollClientName = "the epoll client (a goroutine per CPU, one write and one read per message)"

// wsReadBuf is each epoll goroutine's read buffer.
const wsReadBuf = 64 << 10

// rawFDs takes the connections out of the net package: each one's
// descriptor duplicated (non-blocking, as the net package made it), then
// the net.Conn closed. On failure the descriptors taken are closed and
// the connections left as they are closed too.
func rawFDs(conns []net.Conn) ([]int, error) {
	fds := make([]int, 0, len(conns))
	fail := func(err error) ([]int, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		closeAll(conns)
		return nil, err
	}
	for _, c := range conns {
		sc, ok := c.(syscall.Conn)
		if !ok {
			return fail(fmt.Errorf("%T has no descriptor", c))
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return fail(err)
		}
		nfd := -1
		var derr error
		if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
			return fail(err)
		}
		if derr != nil {
			return fail(derr)
		}
		fds = append(fds, nfd)
		c.Close()
	}
	return fds, nil
}

// wsPollers is how many epoll goroutines drive n connections: one per CPU
// this process may run on.
func wsPollers(n int) int {
	var set unix.CPUSet
	k := runtime.GOMAXPROCS(0)
	if unix.SchedGetaffinity(0, &set) == nil && set.Count() > 0 {
		k = set.Count()
	}
	return max(1, min(k, n))
}

// wsPoller is one epoll goroutine's instance over its share of the
// descriptors; the event's Fd field carries the index in that share. The
// goroutine waits for its epoll descriptor through Go's netpoller (an
// epoll descriptor is pollable), never in a blocking epoll_wait(2) that
// would hold the harness's only P while the publisher waits to run.
type wsPoller struct {
	epfd   int
	file   *os.File // epfd, for the netpoller
	rc     syscall.RawConn
	fds    []int
	events [256]unix.EpollEvent
	n      int   // events of the last poll
	err    error // error of the last poll
	poll   func(uintptr) bool
	buf    []byte
}

func newWSPoller(fds []int) (*wsPoller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	p := &wsPoller{epfd: epfd, fds: fds, buf: make([]byte, wsReadBuf)}
	for i, fd := range fds {
		// Level-triggered: one read per event; what it left is
		// reported again.
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(i)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(epfd)
			return nil, err
		}
	}
	p.file = os.NewFile(uintptr(epfd), "wsload-epoll")
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, err
	}
	// One closure for the poller's life (RawConn.Read, an interface
	// call, would allocate one made per wait).
	p.poll = func(uintptr) bool {
		p.n, p.err = unix.EpollWait(p.epfd, p.events[:], 0)
		if p.err == unix.EINTR {
			p.n, p.err = 0, nil
		}
		return p.n > 0 || p.err != nil
	}
	return p, nil
}

// drop takes the i-th descriptor out of the poller (it is closed with the
// others at the end).
func (p *wsPoller) drop(i int) { unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, p.fds[i], nil) }

// wait returns the ready events: it polls for up to WSClientSpin (letting
// the harness's other goroutines run between polls), then parks until
// an event or the poller's deadline (setDeadline), after which it
// returns no events.
func (p *wsPoller) wait() ([]unix.EpollEvent, error) {
	var until int64
	for WSClientSpin > 0 {
		if p.poll(0) {
			return p.events[:p.n], p.err
		}
		now := time.Now().UnixNano()
		if until == 0 {
			until = now + int64(WSClientSpin)
		} else if now >= until {
			break
		}
		runtime.Gosched()
	}
	if err := p.rc.Read(p.poll); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, nil
		}
		return nil, err
	}
	return p.events[:p.n], p.err
}

// setDeadline makes wait return (with no events) once t passes; any
// goroutine may call it.
func (p *wsPoller) setDeadline(t time.Time) { p.file.SetReadDeadline(t) }

// read is one read(2) of the i-th descriptor into the poller's buffer:
// 0 and a nil error when nothing was there; io.EOF-like errors end it.
func (p *wsPoller) read(i int) ([]byte, error) {
	for {
		n, err := unix.Read(p.fds[i], p.buf)
		switch {
		case n > 0:
			return p.buf[:n], nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return nil, nil
		case err == nil:
			return nil, errors.New("websocket: the server closed the connection")
		}
		return nil, err
	}
}

// write writes all of b to the i-th descriptor: a frame of the benchmark
// fits an empty socket buffer, so a short write is an error.
func (p *wsPoller) write(i int, b []byte) error {
	for {
		n, err := unix.Write(p.fds[i], b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n != len(b):
			return fmt.Errorf("websocket: short write, %d of %d bytes", n, len(b))
		}
		return nil
	}
}

func (p *wsPoller) close() {
	p.file.Close()
	for _, fd := range p.fds {
		unix.Close(fd)
	}
}

// wsShares splits fds into k shares, round-robin.
func wsShares(fds []int, k int) [][]int {
	shares := make([][]int, k)
	for i, fd := range fds {
		shares[i%k] = append(shares[i%k], fd)
	}
	return shares
}

// wsEchoEpoll is the echo loop on the epoll client: each connection keeps
// one request in flight until deadline, then its last answer is read
// (for at most 10 s more).
func wsEchoEpoll(conns []net.Conn, req, want []byte, deadline time.Time) wsEchoResult {
	var total wsEchoResult
	fds, err := rawFDs(conns)
	if err != nil {
		total.failed(err)
		total.fails = int64(len(conns))
		return total
	}
	shares := wsShares(fds, wsPollers(len(fds)))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, share := range shares {
		wg.Go(func() {
			e := wsEchoShare(share, req, want, deadline)
			mu.Lock()
			total.add(&e)
			mu.Unlock()
		})
	}
	wg.Wait()
	return total
}

// wsEchoConn is one connection's state in the epoll echo loop.
type wsEchoConn struct {
	got  int   // bytes of the current answer read
	sent int64 // when the sampled request went out, Unix ns (0: not sampled)
	n    int64 // answers
}

func wsEchoShare(fds []int, req, want []byte, deadline time.Time) wsEchoResult {
	var e wsEchoResult
	p, err := newWSPoller(fds)
	if err != nil {
		for range fds {
			e.failed(err)
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
		return e
	}
	defer p.close()
	cs := make([]wsEchoConn, len(fds))
	live := 0
	for i := range fds {
		if err := p.write(i, req); err != nil {
			e.failed(err)
			p.drop(i)
			continue
		}
		live++
	}
	stop, giveUp := deadline.UnixNano(), deadline.Add(10*time.Second).UnixNano()
	p.setDeadline(time.Unix(0, giveUp))
	for live > 0 {
		evs, err := p.wait()
		if err != nil {
			e.failed(err)
			break
		}
		now := time.Now().UnixNano()
		if now >= giveUp {
			e.failed(fmt.Errorf("websocket: %d answers still missing 10 s after the end", live))
			break
		}
		for _, ev := range evs {
			i := int(ev.Fd)
			c := &cs[i]
			b, err := p.read(i)
			if err == nil && b == nil {
				continue
			}
			if err == nil && (c.got+len(b) > len(want) || !bytes.Equal(b, want[c.got:c.got+len(b)])) {
				err = errWSAnswer
			}
			if err != nil {
				e.failed(err)
				p.drop(i)
				live--
				continue
			}
			if c.got += len(b); c.got < len(want) {
				continue
			}
			c.got = 0
			c.n++
			e.msgs++
			if c.sent != 0 {
				e.lat = append(e.lat, float64(time.Now().UnixNano()-c.sent)/1e3)
				c.sent = 0
			}
			if now >= stop {
				p.drop(i)
				live--
				continue
			}
			// One latency sample in 8 keeps the slice small.
			if c.n&7 == 7 {
				c.sent = time.Now().UnixNano()
			}
			if err := p.write(i, req); err != nil {
				e.failed(err)
				p.drop(i)
				live--
			}
		}
	}
	return e
}

// readEpoll reads the subscribers on the epoll client; stop ends the
// goroutines and closes the connections.
func (b *wsSubs) readEpoll(subs []net.Conn) (stop func(), err error) {
	fds, err := rawFDs(subs)
	if err != nil {
		return nil, err
	}
	shares := wsShares(fds, wsPollers(len(fds)))
	var ps []*wsPoller
	for k, share := range shares {
		p, err := newWSPoller(share)
		if err != nil {
			for _, p := range ps {
				p.close()
			}
			for _, share := range shares[k:] {
				for _, fd := range share {
					unix.Close(fd)
				}
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	var (
		done    sync.WaitGroup
		stopped atomic.Bool
	)
	for _, p := range ps {
		done.Go(func() {
			defer p.close()
			b.readShare(p, &stopped)
		})
	}
	return func() {
		stopped.Store(true)
		for _, p := range ps {
			p.setDeadline(time.Now())
		}
		done.Wait()
	}, nil
}

// readShare reads p's subscribers until stopped: whole frames are handed
// to frame from the read buffer, a frame split between reads is gathered
// in its subscriber's own buffer first.
func (b *wsSubs) readShare(p *wsPoller, stopped *atomic.Bool) {
	L := len(b.dataWant)
	subs := make([]wsSub, len(p.fds))
	part := make([][]byte, len(p.fds))
	ended := make([]bool, len(p.fds))
	for i := range part {
		part[i] = make([]byte, 0, L)
	}
	end := func(i int, err error) {
		ended[i] = true
		p.drop(i)
		b.end(&subs[i], err)
	}
	defer func() {
		for i := range subs {
			if !ended[i] {
				b.end(&subs[i], nil)
			}
		}
	}()
	for !stopped.Load() {
		evs, err := p.wait()
		if err != nil {
			for i := range subs {
				if !ended[i] {
					end(i, err)
				}
			}
			return
		}
		for _, ev := range evs {
			i := int(ev.Fd)
			if ended[i] {
				continue
			}
			data, err := p.read(i)
			if err == nil && data == nil {
				continue
			}
			if err != nil {
				end(i, err)
				continue
			}
			if k := len(part[i]); k > 0 {
				n := min(L-k, len(data))
				part[i] = append(part[i], data[:n]...)
				data = data[n:]
				if len(part[i]) < L {
					continue
				}
				err = b.frame(&subs[i], part[i])
				part[i] = part[i][:0]
			}
			for err == nil && len(data) >= L {
				err = b.frame(&subs[i], data[:L])
				data = data[L:]
			}
			if err != nil {
				end(i, err)
				continue
			}
			part[i] = append(part[i], data...)
		}
	}
}
