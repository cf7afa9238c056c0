package harness

// The WebSocket workloads (wsidle, wsecho*, wsbroadcast), driven by the
// harness's own client in its own process: raw TCP connections upgraded
// with a hand-written HTTP/1.1 request (the 101 and its
// Sec-WebSocket-Accept checked), frames built once with riptide's ws codec
// (ws.PutHeader, ws.Mask) and answers compared byte for byte with the
// frame a correct server sends. A message costs the client one write and
// one read, no allocation, so that the server, not the client, bounds a
// run; the client's CPU time is reported beside the server's.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/websocket"
	"github.com/riptide-http/riptide/ws"

	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

// WSMode says which WebSocket workload a Workload is.
type WSMode string

const (
	// WSNone is not a WebSocket workload.
	WSNone WSMode = ""
	// WSIdle opens Conns connections, echoes one message on each and
	// holds them idle while the server's RSS and live heap are read.
	WSIdle WSMode = "idle"
	// WSEcho runs Conns connections each echoing WSMsg-byte text
	// messages in a closed loop (one message in flight per connection).
	WSEcho WSMode = "echo"
	// WSBroadcast subscribes Conns connections, then one publisher
	// connection sends WSMsg-byte text messages that the server writes to
	// every subscriber; at most WSBroadcastWindow messages are in flight
	// (sent and not yet received by every subscriber).
	WSBroadcast WSMode = "broadcast"
)

// The WebSocket workloads' sizes.
const (
	WSIdleConns       = 10_000
	WSEchoConns       = 100
	WSManyConns       = 1000
	WSBroadcastConns  = 1000
	WSSmallMsg        = 64
	WSLargeMsg        = 1024
	WSBroadcastWindow = 8
)

// WSClientSpin is how long the epoll client's pollers (Linux) poll
// without sleeping (epoll_wait with a zero timeout) before they wait in
// the kernel. A client that sleeps between answers must be woken by each
// one, and the server's write pays for that wakeup: spinning keeps the
// client's cost out of the server's figures, at the price of a load CPU
// that always looks busy. 0 (the default) never spins.
var WSClientSpin time.Duration

// wsRun is one run of a WebSocket workload against addr, served by proc
// (nil for a server in this process: no CPU figures then, and no wsidle).
type wsRun struct {
	proc *Proc
	pid  int // the server's process when proc is nil (0: none)
	// goroutines drives the connections with a goroutine each through
	// the net package (the portable client) even where the epoll client
	// (ws_linux.go) is available.
	goroutines bool
	addr       string
	w          Workload
	duration   time.Duration
}

// RunWS runs the WebSocket workload w (its Conns connections) for d
// against the server at addr, which proc runs (nil: a server in this
// process, measured without CPU figures; wsidle needs proc).
func RunWS(ctx context.Context, proc *Proc, addr string, w Workload, d time.Duration) ([]byte, WrkStats, error) {
	return wsRun{proc: proc, addr: addr, w: w, duration: d}.run(ctx)
}

// RunWSPID is RunWS against a server this process did not start: pid is
// its process (0: unknown, no server CPU figures); goroutines drives the
// connections with a goroutine each even where the epoll client runs.
func RunWSPID(ctx context.Context, pid int, addr string, w Workload, d time.Duration, goroutines bool) ([]byte, WrkStats, error) {
	return wsRun{pid: pid, addr: addr, w: w, duration: d, goroutines: goroutines}.run(ctx)
}

// cpuSpan reads the server's and this process's CPU time at the start of
// a measured loop.
type cpuSpan struct {
	pid             int
	srv0, self0     float64
	srvErr, selfErr error
}

func (r wsRun) startCPU() cpuSpan {
	s := cpuSpan{pid: r.pid, srvErr: errors.New("server in this process")}
	if r.proc != nil {
		s.pid = r.proc.PID()
	}
	if s.pid > 0 {
		s.srv0, s.srvErr = treeCPUSeconds(s.pid)
	}
	s.self0, s.selfErr = selfCPUSeconds()
	return s
}

// stop sets st's ServerCPUSeconds and LoadCPUSeconds to the CPU time
// spent since startCPU, where both readings succeeded.
func (s cpuSpan) stop(st *WrkStats) {
	if s.srvErr == nil {
		if srv1, err := treeCPUSeconds(s.pid); err == nil {
			st.ServerCPUSeconds = srv1 - s.srv0
		}
	}
	if self1, err := selfCPUSeconds(); err == nil && s.selfErr == nil {
		st.LoadCPUSeconds = self1 - s.self0
	}
}

func (r wsRun) run(ctx context.Context) ([]byte, WrkStats, error) {
	if r.w.WS == WSIdle && r.proc == nil {
		return nil, WrkStats{}, errors.New("wsidle needs the server's process")
	}
	switch r.w.WS {
	case WSIdle:
		return r.idle(ctx)
	case WSBroadcast:
		return r.broadcast(ctx)
	}
	return r.echo(ctx)
}

// wsPayload is the text payload of an n-byte message.
func wsPayload(n int, fill string) []byte {
	return bytes.Repeat([]byte(fill), n/len(fill)+1)[:n]
}

// wsFrame encodes one final text frame of payload, masked with a fixed
// key when masked (a client's frame; the key's unpredictability protects
// proxies, not the benchmark).
func wsFrame(payload []byte, masked bool) []byte {
	h := ws.Header{Fin: true, Op: ws.OpText, Masked: masked, Key: [4]byte{0x5a, 0x17, 0xc3, 0x8e}, Length: int64(len(payload))}
	b := make([]byte, h.Len()+len(payload))
	n := ws.PutHeader(b, &h)
	copy(b[n:], payload)
	if masked {
		ws.Mask(h.Key, 0, b[n:])
	}
	return b
}

// wsDial opens a TCP connection to addr and upgrades it to a WebSocket at
// path; it returns the connection once a correct 101 arrived, with no
// byte after it read.
func wsDial(ctx context.Context, addr, path string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := wsHandshake(c, addr, path); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

func wsHandshake(c net.Conn, addr, path string) error {
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		return err
	}
	// Read up to the end of the head: the server sends nothing after the
	// 101 until the client does, so nothing more may arrive.
	var buf [1024]byte
	n := 0
	for {
		m, err := c.Read(buf[n:])
		n += m
		if i := bytes.Index(buf[:n], []byte("\r\n\r\n")); i >= 0 {
			if i+4 != n {
				return fmt.Errorf("websocket: %d unexpected bytes after the 101", n-i-4)
			}
			break
		}
		if err != nil {
			return fmt.Errorf("websocket handshake: %w", err)
		}
		if n == len(buf) {
			return errors.New("websocket: response head over 1 KiB")
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(buf[:n])), nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("websocket: status %d, want 101", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != websocket.AcceptKey(key) {
		return fmt.Errorf("websocket: Sec-WebSocket-Accept %q, want %q", got, websocket.AcceptKey(key))
	}
	return nil
}

// wsDialAll opens n connections at path, 64 handshakes at a time (the
// accept backlog is finite), each followed by one echoed message when
// echo is set; it returns the connections that succeeded, the number that
// failed and the first error.
func wsDialAll(ctx context.Context, addr, path string, n int, echo []byte) ([]net.Conn, int, error) {
	var req, want []byte
	if echo != nil {
		req, want = wsFrame(echo, true), wsFrame(echo, false)
	}
	return openMany(ctx, n, 64, func() (net.Conn, error) {
		c, err := wsDial(ctx, addr, path)
		if err != nil || req == nil {
			return c, err
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		if err := wsEchoOnce(c, req, want, make([]byte, len(want))); err != nil {
			c.Close()
			return nil, err
		}
		c.SetDeadline(time.Time{})
		return c, nil
	})
}

// openMany calls open n times, par at a time (the accept backlog is
// finite), and returns what it opened, the number of failures and the
// first error. openIdle and the WebSocket workloads' dials share it.
func openMany[C any](ctx context.Context, n, par int, open func() (C, error)) ([]C, int, error) {
	var (
		mu       sync.Mutex
		conns    []C
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, par)
	for range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := open()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if errs++; firstErr == nil {
					firstErr = err
				}
				return
			}
			conns = append(conns, c)
		}()
	}
	wg.Wait()
	return conns, errs, firstErr
}

var errWSAnswer = errors.New("websocket: the answer is not the expected frame")

// wsEchoOnce writes req and reads len(want) bytes into buf, which must
// equal want.
func wsEchoOnce(c net.Conn, req, want, buf []byte) error {
	if _, err := c.Write(req); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if !bytes.Equal(buf, want) {
		return errWSAnswer
	}
	return nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// wsHeapStats is what a WebSocket server answers at wsserver.HeapPath.
type wsHeapStats struct {
	Heap       int64 `json:"heap_bytes"`
	Stack      int64 `json:"stack_bytes"`
	Goroutines int64 `json:"goroutines"`
}

// wsHeap asks the server at addr for its live heap (after a GC), on a
// connection of its own that it closes.
func wsHeap(ctx context.Context, addr string) (wsHeapStats, error) {
	var hs wsHeapStats
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+wsserver.HeapPath, nil)
	if err != nil {
		return hs, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return hs, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return hs, fmt.Errorf("%s answered %d", wsserver.HeapPath, resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&hs)
	if err == nil && hs.Heap == 0 {
		err = fmt.Errorf("%s reported no heap", wsserver.HeapPath)
	}
	return hs, err
}

// idle opens the connections, echoes one message on each, waits
// idleSettle and reports the growth of the server's RSS and of its live
// heap plus goroutine stacks, per connection. RSS is read before the heap
// report each time (the report forces a GC).
func (r wsRun) idle(ctx context.Context) ([]byte, WrkStats, error) {
	var st WrkStats
	n := min(r.w.Conns, raiseNoFile(uint64(r.w.Conns+500))-500)
	if n <= 0 {
		return nil, st, fmt.Errorf("RLIMIT_NOFILE too low for the wsidle workload")
	}
	rss0, err := r.proc.RSS()
	if err != nil {
		return nil, st, err
	}
	heap0, heapErr := wsHeap(ctx, r.addr)
	start := time.Now()
	conns, errs, firstErr := wsDialAll(ctx, r.addr, wsserver.EchoPath, n, wsPayload(r.w.WSMsg, "0123456789abcdef"))
	defer closeAll(conns)
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
		return nil, st, ctx.Err()
	}
	rss1, err := r.proc.RSS()
	if err != nil {
		return nil, st, err
	}
	heap1, heapErr1 := wsHeap(ctx, r.addr)
	st.Requests = int64(len(conns))
	st.Read = int64(errs)
	st.DurationUS = time.Since(start).Microseconds()
	var out bytes.Buffer
	fmt.Fprintf(&out, "wsidle: %d of %d WebSocket connections upgraded and echoed one %d-byte message (%d errors", len(conns), n, r.w.WSMsg, errs)
	if firstErr != nil {
		fmt.Fprintf(&out, "; first: %v", firstErr)
	}
	fmt.Fprintf(&out, ")\n")
	if len(conns) > 0 {
		k := float64(len(conns))
		st.IdleKiBPerConn = float64(rss1-rss0) / 1024 / k
		fmt.Fprintf(&out, "server RSS %d KiB before, %d KiB with them idle: %.2f KiB per connection\n", rss0/1024, rss1/1024, st.IdleKiBPerConn)
		if heapErr == nil && heapErr1 == nil {
			st.HeapKiBPerConn = float64(heap1.Heap+heap1.Stack-heap0.Heap-heap0.Stack) / 1024 / k
			st.GoroutinesPerConn = float64(heap1.Goroutines-heap0.Goroutines) / k
			fmt.Fprintf(&out, "server live heap %d → %d KiB, goroutine stacks %d → %d KiB, goroutines %d → %d: %.2f KiB (heap + stacks) and %.2f goroutines per connection\n",
				heap0.Heap/1024, heap1.Heap/1024, heap0.Stack/1024, heap1.Stack/1024, heap0.Goroutines, heap1.Goroutines, st.HeapKiBPerConn, st.GoroutinesPerConn)
		} else {
			fmt.Fprintf(&out, "server live heap: not reported (%v)\n", errors.Join(heapErr, heapErr1))
		}
	}
	return out.Bytes(), st, nil
}

// echo runs the closed-loop echo: every connection writes one message,
// reads its echo and checks it, until the duration has passed. The
// server's and this process's CPU time are read around the loop only (not
// the handshakes).
func (r wsRun) echo(ctx context.Context) ([]byte, WrkStats, error) {
	var st WrkStats
	n := min(r.w.Conns, raiseNoFile(uint64(r.w.Conns+500))-500)
	payload := wsPayload(r.w.WSMsg, "0123456789abcdef")
	conns, errs, firstErr := wsDialAll(ctx, r.addr, wsserver.EchoPath, n, nil)
	defer closeAll(conns)
	if len(conns) == 0 {
		return nil, st, fmt.Errorf("no WebSocket connection: %v", firstErr)
	}
	req, want := wsFrame(payload, true), wsFrame(payload, false)
	cpu := r.startCPU()
	start := time.Now()
	var e wsEchoResult
	if wsEpollClient && !r.goroutines {
		e = wsEchoEpoll(conns, req, want, start.Add(r.duration))
	} else {
		e = wsEchoGoroutines(conns, req, want, start.Add(r.duration))
	}
	if firstErr == nil {
		firstErr = e.firstErr
	}
	lat := e.lat
	elapsed := time.Since(start)
	cpu.stop(&st)
	st.Protocol = "ws"
	st.Requests = e.msgs
	st.Read = int64(errs) + e.fails
	st.Status = e.bad
	st.DurationUS = elapsed.Microseconds()
	st.RPS = float64(st.Requests) / elapsed.Seconds()
	slices.Sort(lat)
	if k := len(lat); k > 0 {
		st.P50US, st.P90US, st.P99US, st.MaxUS = lat[k*50/100], lat[k*90/100], lat[k*99/100], lat[k-1]
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "wsecho: %d connections (%d failed to open) × 1 message in flight, %d-byte text messages, for %s, %s\n", len(conns), errs, r.w.WSMsg, r.duration, r.clientName())
	fmt.Fprintf(&out, "messages echoed %d in %s: %.0f msg/s\n", st.Requests, elapsed.Round(time.Millisecond), st.RPS)
	fmt.Fprintf(&out, "latency (1 in 8 sampled) p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs\n", st.P50US, st.P90US, st.P99US, st.MaxUS)
	fmt.Fprintf(&out, "server CPU %.3f s, client CPU %.3f s (this process)\n", st.ServerCPUSeconds, st.LoadCPUSeconds)
	fmt.Fprintf(&out, "errors %d, wrong answers %d", st.Read, st.Status)
	if firstErr != nil {
		fmt.Fprintf(&out, " (first: %v)", firstErr)
	}
	fmt.Fprintln(&out)
	return out.Bytes(), st, nil
}

// broadcast subscribes the connections, synchronises (a "sync" message
// published until every subscriber has seen one), then publishes for the
// duration with at most WSBroadcastWindow messages in flight and counts
// deliveries: messages published × subscribers, each checked byte for
// byte.
func (r wsRun) broadcast(ctx context.Context) ([]byte, WrkStats, error) {
	var st WrkStats
	m := min(r.w.Conns, raiseNoFile(uint64(r.w.Conns+500))-500)
	subs, errs, firstErr := wsDialAll(ctx, r.addr, wsserver.SubscribePath, m, nil)
	defer closeAll(subs)
	if errs > 0 {
		return nil, st, fmt.Errorf("%d of %d subscribers failed to connect: %v", errs, m, firstErr)
	}
	pub, err := wsDial(ctx, r.addr, wsserver.PublishPath)
	if err != nil {
		return nil, st, err
	}
	defer pub.Close()
	syncMsg, data := wsPayload(r.w.WSMsg, "s"), wsPayload(r.w.WSMsg, "0123456789abcdef")
	syncReq, dataReq := wsFrame(syncMsg, true), wsFrame(data, true)
	syncWant, dataWant := wsFrame(syncMsg, false), wsFrame(data, false)

	b := &wsSubs{syncWant: syncWant, dataWant: dataWant, n: int64(len(subs)), tokens: make(chan struct{}, WSBroadcastWindow)}
	for range WSBroadcastWindow {
		b.tokens <- struct{}{}
	}
	b.ready.Add(len(subs))
	var stopSubs func()
	if wsEpollClient && !r.goroutines {
		stopSubs, err = b.readEpoll(subs)
		if err != nil {
			return nil, st, err
		}
	} else {
		stopSubs = b.readGoroutines(subs)
	}
	stopped := false
	defer func() {
		if !stopped {
			stopSubs()
		}
	}()
	nsubs, tokens := b.n, b.tokens
	// Synchronise: every subscriber is in the server's group once it has
	// received a sync message.
	allReady := make(chan struct{})
	go func() { b.ready.Wait(); close(allReady) }()
	syncDeadline := time.Now().Add(30 * time.Second)
	pub.SetWriteDeadline(syncDeadline.Add(r.duration + 30*time.Second))
wait:
	for {
		if _, err := pub.Write(syncReq); err != nil {
			return nil, st, fmt.Errorf("publisher: %w", err)
		}
		select {
		case <-allReady:
			break wait
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil, st, ctx.Err()
		}
		if time.Now().After(syncDeadline) {
			return nil, st, errors.New("wsbroadcast: the subscribers did not all receive the sync message within 30 s")
		}
	}

	cpu := r.startCPU()
	start := time.Now()
	deadline := start.Add(r.duration)
	var sent int64
	stalled := false
	for time.Now().Before(deadline) && !stalled {
		select {
		case <-tokens:
		case <-time.After(10 * time.Second):
			stalled = true
			continue
		}
		if _, err := pub.Write(dataReq); err != nil {
			return nil, st, fmt.Errorf("publisher: %w", err)
		}
		sent++
	}
	// Wait for the messages in flight.
	for i := 0; i < WSBroadcastWindow && !stalled; i++ {
		select {
		case <-tokens:
		case <-time.After(10 * time.Second):
			stalled = true
		}
	}
	elapsed := time.Since(start)
	cpu.stop(&st)
	stopSubs()
	stopped = true
	st.Protocol = "ws"
	st.Requests = b.delivered.Load()
	st.Status = b.bad.Load()
	st.DurationUS = elapsed.Microseconds()
	st.RPS = float64(st.Requests) / elapsed.Seconds()
	if stalled {
		st.Timeout = 1
	}
	b.mu.Lock()
	subErr := b.err
	b.mu.Unlock()
	if subErr != nil {
		st.Read++
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "wsbroadcast: %d subscribers, 1 publisher, %d-byte text messages, at most %d in flight, for %s, subscribers read by %s\n", len(subs), r.w.WSMsg, WSBroadcastWindow, r.duration, r.clientName())
	fmt.Fprintf(&out, "messages published %d, deliveries %d of %d in %s: %.0f deliveries/s, %.0f messages/s\n",
		sent, st.Requests, sent*nsubs, elapsed.Round(time.Millisecond), st.RPS, float64(sent)/elapsed.Seconds())
	fmt.Fprintf(&out, "server CPU %.3f s, client CPU %.3f s (this process)\n", st.ServerCPUSeconds, st.LoadCPUSeconds)
	fmt.Fprintf(&out, "stalled %v, wrong frames %d, subscriber error: %v\n", stalled, st.Status, subErr)
	if st.Requests != sent*nsubs && !stalled {
		return out.Bytes(), st, fmt.Errorf("wsbroadcast: %d deliveries, want %d", st.Requests, sent*nsubs)
	}
	return out.Bytes(), st, nil
}

// clientName says which client drives the connections.
func (r wsRun) clientName() string { return r.clientNameSpin(WSClientSpin) }

// clientNameSpin is clientName with the epoll client spinning for spin.
func (r wsRun) clientNameSpin(spin time.Duration) string {
	if wsEpollClient && !r.goroutines {
		if spin > 0 {
			return wsEpollClientName + ", polling " + spin.String() + " before it sleeps"
		}
		return wsEpollClientName
	}
	return "a goroutine per connection (net package)"
}

// wsEchoResult is what the echo loop counted.
type wsEchoResult struct {
	msgs, bad, fails int64
	lat              []float64 // µs, one message in 8
	firstErr         error
}

// failed counts err, a connection's end, into e.
func (e *wsEchoResult) failed(err error) {
	if err == errWSAnswer {
		e.bad++
	} else {
		e.fails++
	}
	if e.firstErr == nil {
		e.firstErr = err
	}
}

// add merges o into e.
func (e *wsEchoResult) add(o *wsEchoResult) {
	e.msgs += o.msgs
	e.bad += o.bad
	e.fails += o.fails
	e.lat = append(e.lat, o.lat...)
	if e.firstErr == nil {
		e.firstErr = o.firstErr
	}
}

// wsEchoGoroutines is the echo loop with a goroutine per connection:
// write the request, read the answer and compare it, until deadline.
func wsEchoGoroutines(conns []net.Conn, req, want []byte, deadline time.Time) wsEchoResult {
	var (
		mu    sync.Mutex
		total wsEchoResult
		wg    sync.WaitGroup
	)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetDeadline(deadline.Add(10 * time.Second))
			buf := make([]byte, len(want))
			var e wsEchoResult
			for {
				t := time.Now()
				if !t.Before(deadline) {
					break
				}
				if err := wsEchoOnce(c, req, want, buf); err != nil {
					e.failed(err)
					break
				}
				e.msgs++
				// One latency sample in 8 keeps the slice small.
				if e.msgs&7 == 0 {
					e.lat = append(e.lat, float64(time.Since(t).Microseconds()))
				}
			}
			mu.Lock()
			total.add(&e)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}

// wsSubs is the subscribers' side of wsbroadcast: every frame a
// subscriber receives is checked and counted, and the last subscriber to
// receive a published message returns its token to the publisher.
type wsSubs struct {
	syncWant, dataWant []byte // the same length
	n                  int64  // subscribers
	ready              sync.WaitGroup
	slots              [WSBroadcastWindow]atomic.Int64
	tokens             chan struct{}
	delivered, bad     atomic.Int64
	mu                 sync.Mutex
	err                error // the first subscriber's error
}

// wsSub is one subscriber's state.
type wsSub struct {
	synced bool
	k      int64 // data messages received
}

// frame handles f, one whole frame that sub received; an error (a wrong
// frame) ends the subscriber.
func (b *wsSubs) frame(sub *wsSub, f []byte) error {
	switch {
	case bytes.Equal(f, b.syncWant):
		// Sync messages published before every subscriber had one
		// may still arrive: only the first counts.
		if !sub.synced && sub.k == 0 {
			sub.synced = true
			b.ready.Done()
		}
	case bytes.Equal(f, b.dataWant):
		b.delivered.Add(1)
		s := &b.slots[sub.k%WSBroadcastWindow]
		sub.k++
		if s.Add(1) == b.n {
			s.Store(0)
			b.tokens <- struct{}{}
		}
	default:
		b.bad.Add(1)
		return errWSAnswer
	}
	return nil
}

// end ends sub, with err unless nil (the run's end): a subscriber that
// never synced no longer holds the synchronisation up.
func (b *wsSubs) end(sub *wsSub, err error) {
	if !sub.synced {
		sub.synced = true
		b.ready.Done()
	}
	if err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
	}
}

// readGoroutines reads the subscribers with a goroutine each; stop
// closes them and waits for the goroutines.
func (b *wsSubs) readGoroutines(subs []net.Conn) (stop func()) {
	var done sync.WaitGroup
	for _, c := range subs {
		done.Add(1)
		go func() {
			defer done.Done()
			buf := make([]byte, len(b.dataWant))
			var sub wsSub
			for {
				if _, err := io.ReadFull(c, buf); err != nil {
					if errors.Is(err, net.ErrClosed) {
						err = nil
					}
					b.end(&sub, err)
					return
				}
				if err := b.frame(&sub, buf); err != nil {
					b.end(&sub, err)
					return
				}
			}
		}()
	}
	return func() {
		closeAll(subs)
		done.Wait()
	}
}
