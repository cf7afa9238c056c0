package harness

// The HTTP/3 load generator: a Go client on quic-go's QUIC connections,
// run inside the harness process (no HTTP/3 load tool is packaged here:
// Debian's h2load and curl have no HTTP/3). To leave the server as much of
// the two vCPUs as it can, it is as cheap as quic-go allows: each request
// is a pre-encoded HEADERS frame written on a new stream, and each response
// is read through a reused buffer, checked frame by frame with riptide's
// sans-I/O h3 codec (status 200, and the expected body or body length),
// never copied.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/h3"
)

// H3Streams is the number of requests each HTTP/3 connection of the h3
// workload keeps in flight (one goroutine each).
const H3Streams = 10

// H3Conns is the h3 workload's connection count.
const H3Conns = 10

// h3Run is one run of an HTTP/3 workload against addr: w.Conns QUIC
// connections (one for h3bulk), each with streams requests in flight,
// for duration. Before and after it reads the server's allocation counter
// (benchserver.AllocsPath) when the server serves one.
type h3Run struct {
	addr     string
	w        Workload
	conns    int
	streams  int
	duration time.Duration
}

// h3Result is what one connection's workers counted.
type h3Result struct {
	requests, bytes, status, errs int64
	lat                           []float64 // µs, one per completed request
	firstErr                      error
}

func (r h3Run) run(ctx context.Context) ([]byte, WrkStats, error) {
	var st WrkStats
	ctx, cancel := context.WithTimeout(ctx, r.duration+30*time.Second)
	defer cancel()
	conns := make([]*h3Conn, 0, r.conns)
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for range max(r.conns, 1) {
		c, err := dialH3(ctx, r.addr)
		if err != nil {
			return nil, st, fmt.Errorf("h3: dial %s: %w", r.addr, err)
		}
		conns = append(conns, c)
	}
	allocs0, allocsErr := conns[0].allocs(ctx)

	req := h3Request(r.w)
	var (
		mu  sync.Mutex
		all h3Result
		wg  sync.WaitGroup
	)
	var stop atomic.Bool
	self0, selfErr := selfCPUSeconds()
	start := time.Now()
	deadline := start.Add(r.duration)
	for _, c := range conns {
		for range max(r.streams, 1) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := c.work(ctx, req, r.w, deadline, &stop)
				mu.Lock()
				defer mu.Unlock()
				all.requests += res.requests
				all.bytes += res.bytes
				all.status += res.status
				all.errs += res.errs
				all.lat = append(all.lat, res.lat...)
				if all.firstErr == nil {
					all.firstErr = res.firstErr
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	if self1, err := selfCPUSeconds(); selfErr == nil && err == nil {
		// The client runs in this process; the rest of the harness
		// waits meanwhile.
		st.LoadCPUSeconds = self1 - self0
	}
	st.Requests, st.Bytes, st.Status, st.Failed = all.requests, all.bytes, all.status, all.errs
	st.DurationUS = elapsed.Microseconds()
	st.RPS = float64(all.requests) / elapsed.Seconds()
	st.MBps = float64(all.bytes) / 1e6 / elapsed.Seconds()
	st.Protocol = "h3"
	slices.Sort(all.lat)
	if n := len(all.lat); n > 0 {
		st.P50US, st.P90US, st.P99US, st.MaxUS = all.lat[n*50/100], all.lat[n*90/100], all.lat[n*99/100], all.lat[n-1]
	}
	allocs1, err := conns[0].allocs(ctx)
	if allocsErr == nil && err == nil && all.requests > 0 {
		// The two counter requests are counted in; against thousands of
		// measured requests they are noise.
		st.AllocsPerReq = float64(allocs1-allocs0) / float64(all.requests)
	}

	var out bytes.Buffer
	fmt.Fprintf(&out, "h3 load (quic-go %s client): %d connections × %d streams, %s %s for %s\n",
		quicGoVersion(), len(conns), max(r.streams, 1), r.w.method(), r.w.Path, r.duration)
	fmt.Fprintf(&out, "requests %d in %s: %.0f req/s, %.1f MB/s of bodies\n", all.requests, elapsed.Round(time.Millisecond), st.RPS, st.MBps)
	fmt.Fprintf(&out, "latency p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs\n", st.P50US, st.P90US, st.P99US, st.MaxUS)
	fmt.Fprintf(&out, "errors %d, unexpected responses %d\n", all.errs, all.status)
	switch {
	case allocsErr != nil:
		fmt.Fprintf(&out, "server allocations: not reported (%v)\n", allocsErr)
	case err != nil:
		fmt.Fprintf(&out, "server allocations: not reported after the run (%v)\n", err)
	default:
		fmt.Fprintf(&out, "server allocations: %d objects, %.2f per request\n", allocs1-allocs0, st.AllocsPerReq)
	}
	if all.firstErr != nil {
		fmt.Fprintf(&out, "first error: %v\n", all.firstErr)
	}
	if ctx.Err() != nil {
		return out.Bytes(), st, ctx.Err()
	}
	return out.Bytes(), st, nil
}

// h3Conn is one client connection: a QUIC connection with our control
// stream open (type 0x00 and an empty SETTINGS frame: every default).
type h3Conn struct {
	qc   *quic.Conn
	ctrl *quic.SendStream
}

// h3ClientTLS offers h3 and does not verify the server's self-signed
// certificate.
var h3ClientTLS = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}

func dialH3(ctx context.Context, addr string) (*h3Conn, error) {
	qc, err := quic.DialAddr(ctx, addr, h3ClientTLS, &quic.Config{MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	c := &h3Conn{qc: qc}
	if err := c.start(); err != nil {
		qc.CloseWithError(0x0101, "")
		return nil, err
	}
	return c, nil
}

// start checks the ALPN protocol and opens the control stream with the
// client's SETTINGS.
func (c *h3Conn) start() error {
	if p := c.qc.ConnectionState().TLS.NegotiatedProtocol; p != "h3" {
		return fmt.Errorf("ALPN %q, want h3", p)
	}
	ctrl, err := c.qc.OpenUniStream()
	if err == nil {
		_, err = ctrl.Write(append([]byte{0x00}, h3.AppendSettings(nil, &h3.Settings{})...))
	}
	c.ctrl = ctrl
	return err
}

func (c *h3Conn) close() { c.qc.CloseWithError(0x0100, "") } // H3_NO_ERROR

// h3Request returns the HEADERS frame of w's request.
func h3Request(w Workload) []byte {
	sec := h3.AppendFieldSectionPrefix(nil)
	for _, f := range [][2]string{{":method", w.method()}, {":scheme", "https"}, {":authority", "localhost"}, {":path", w.Path}, {"user-agent", "riptide-bench-h3"}} {
		sec = h3.AppendField(sec, f[0], f[1], true)
	}
	return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
}

// work makes requests one after another on new streams until deadline,
// counting those that complete by then.
func (c *h3Conn) work(ctx context.Context, req []byte, w Workload, deadline time.Time, stop *atomic.Bool) h3Result {
	var res h3Result
	rd := newH3Reader()
	fail := func(err error) {
		res.errs++
		if res.firstErr == nil {
			res.firstErr = err
		}
	}
	for !stop.Load() {
		t0 := time.Now()
		if !t0.Before(deadline) {
			break
		}
		s, err := c.qc.OpenStreamSync(ctx)
		if err != nil {
			fail(err)
			stop.Store(true) // the connection is gone
			break
		}
		s.SetDeadline(deadline.Add(10 * time.Second))
		if _, err := s.Write(req); err != nil {
			fail(err)
			s.CancelRead(0x010c)
			continue
		}
		s.Close()
		status, n, err := rd.response(s, w)
		if err != nil {
			fail(err)
			s.CancelRead(0x010c) // H3_REQUEST_CANCELLED
			continue
		}
		t1 := time.Now()
		if t1.After(deadline) {
			break // finished after the window: not counted
		}
		if status != 200 {
			res.status++
			continue
		}
		res.requests++
		res.bytes += n
		res.lat = append(res.lat, float64(t1.Sub(t0).Microseconds()))
	}
	return res
}

// allocs asks the server for its heap allocation counter (GET
// benchserver.AllocsPath: the decimal count of heap objects allocated since
// start, runtime/metrics /gc/heap/allocs:objects).
func (c *h3Conn) allocs(ctx context.Context) (uint64, error) {
	s, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	s.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.Write(h3Request(Workload{Path: benchserver.AllocsPath})); err != nil {
		return 0, err
	}
	s.Close()
	rd := newH3Reader()
	rd.keep = true
	status, _, err := rd.response(s, Workload{})
	if err != nil {
		return 0, err
	}
	if status != 200 {
		return 0, fmt.Errorf("%s answered %d", benchserver.AllocsPath, status)
	}
	return strconv.ParseUint(string(bytes.TrimSpace(rd.body)), 10, 64)
}

// h3Reader reads and checks one response at a time through reused
// buffers.
type h3Reader struct {
	br     *bufio.Reader
	p      []byte // frame payload (HEADERS) or a chunk of DATA
	fields []h3.Field
	fbuf   []byte
	keep   bool   // keep the body in body (small responses only)
	body   []byte // with keep
}

func newH3Reader() *h3Reader {
	return &h3Reader{br: bufio.NewReaderSize(nil, 64<<10), p: make([]byte, 32<<10), fbuf: make([]byte, 0, 16<<10)}
}

// errBadResponse marks a response that is not what the workload expects.
var errBadResponse = errors.New("h3: unexpected response")

// response reads one response from s: a HEADERS frame (:status), DATA
// frames, optional trailers, to the end of the stream. Unknown frame types
// are skipped (RFC 9114 §9). With status 200 the body must be
// w.ExpectBody, or w.ExpectLen bytes when that is set (bulk: not compared
// byte by byte). It returns the status and the body length.
func (r *h3Reader) response(s io.Reader, w Workload) (status int, n int64, err error) {
	r.br.Reset(s)
	r.body = r.body[:0]
	headers := 0
	for {
		t, err := readVarint(r.br)
		if err == io.EOF && headers > 0 {
			break
		}
		if err != nil {
			return 0, n, err
		}
		l, err := readVarint(r.br)
		if err != nil {
			return 0, n, err
		}
		switch h3.FrameType(t) {
		case h3.FrameHeaders:
			if l > uint64(len(r.p)) {
				return 0, n, fmt.Errorf("%w: HEADERS of %d bytes", errBadResponse, l)
			}
			if _, err := io.ReadFull(r.br, r.p[:l]); err != nil {
				return 0, n, err
			}
			headers++
			if headers > 1 {
				continue // trailers
			}
			r.fields, _, err = h3.DecodeFieldSection(r.fields[:0], r.fbuf[:0], r.p[:l], uint64(cap(r.fbuf)))
			if err != nil {
				return 0, n, err
			}
			for _, f := range r.fields {
				if string(f.Name) == ":status" {
					status, _ = strconv.Atoi(string(f.Value))
				}
			}
			if status == 0 {
				return 0, n, fmt.Errorf("%w: no :status", errBadResponse)
			}
		case h3.FrameData:
			if headers != 1 {
				return 0, n, fmt.Errorf("%w: DATA outside the body", errBadResponse)
			}
			for rest := l; rest > 0; {
				k := min(rest, uint64(len(r.p)))
				if _, err := io.ReadFull(r.br, r.p[:k]); err != nil {
					return 0, n, err
				}
				if status == 200 && w.ExpectLen == 0 && w.ExpectBody != nil {
					if n+int64(k) > int64(len(w.ExpectBody)) || !bytes.Equal(r.p[:k], w.ExpectBody[n:n+int64(k)]) {
						return 0, n, fmt.Errorf("%w: body differs from the expected %d bytes", errBadResponse, len(w.ExpectBody))
					}
				}
				if r.keep {
					r.body = append(r.body, r.p[:k]...)
				}
				n += int64(k)
				rest -= k
			}
		default:
			if _, err := r.br.Discard(int(l)); err != nil {
				return 0, n, err
			}
		}
	}
	if status == 200 {
		if w.ExpectLen > 0 && n != w.ExpectLen {
			return status, n, fmt.Errorf("%w: body of %d bytes, want %d", errBadResponse, n, w.ExpectLen)
		}
		if w.ExpectLen == 0 && w.ExpectBody != nil && n != int64(len(w.ExpectBody)) {
			return status, n, fmt.Errorf("%w: body of %d bytes, want %d", errBadResponse, n, len(w.ExpectBody))
		}
	}
	return status, n, nil
}

// readVarint reads one QUIC variable-length integer (RFC 9000 §16).
func readVarint(br *bufio.Reader) (uint64, error) {
	b, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(b & 0x3f)
	for range 1<<(b>>6) - 1 {
		c, err := br.ReadByte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// quicGoVersion is the quic-go module version this binary was built with.
func quicGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/quic-go/quic-go" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}

// LoadH3 runs HTTP/3 workload w against addr for d as a benchmark run
// does, with conns connections (the workload's own count when 0), and
// returns the run's report and statistics.
func LoadH3(ctx context.Context, addr string, w Workload, conns int, d time.Duration) ([]byte, WrkStats, error) {
	if conns == 0 {
		conns = w.Conns
	}
	return h3Run{addr: addr, w: w, conns: conns, streams: w.h3Streams(), duration: d}.run(ctx)
}

// FlagOf says why a run with statistics st (and err) must not be counted,
// or "" when it is clean; p is the server's process, nil when it has none.
func FlagOf(st WrkStats, err error, p *Proc) string { return flagOf(st, err, p) }
