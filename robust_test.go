package riptide_test

// Shared machinery of the robustness tests (robust*_test.go): a real
// riptide server on 127.0.0.1, a minimal raw HTTP/1.1 response reader, and
// resource accounting (goroutines, open file descriptors, RSS) so that a
// test can assert that everything it caused is gone again.
//
// Every robustness test has a short variant, run by default (and in CI,
// under -race), and a long variant with the figures of issue 6, run with
//
//	RIPTIDE_LONG=1 go test -run 'Robust' -v -timeout 60m .
//
// The long variants log what they did (requests, errors, RSS and goroutines
// before and after, open fds) with t.Log.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httputil"
	"net/textproto"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// longMode reports whether the long variants were asked for.
func longMode() bool { return os.Getenv("RIPTIDE_LONG") == "1" }

// size picks the short or the long figure.
func size(short, long int) int {
	if longMode() {
		return long
	}
	return short
}

// panicLog is a slog.Handler that counts and keeps the server's error
// records (handler panics, accept errors), so a test can fail on them.
type panicLog struct {
	mu      sync.Mutex
	n       int
	records []string
}

func (p *panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *panicLog) WithGroup(string) slog.Handler            { return p }
func (p *panicLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" || b.Len() < 4096 {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if len(p.records) < 5 {
		p.records = append(p.records, b.String())
	}
	return nil
}

// count returns how many error records were logged and the first few.
func (p *panicLog) count() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, append([]string(nil), p.records...)
}

// liveServer is a riptide.Server serving on a 127.0.0.1 listener.
type liveServer struct {
	*riptide.Server
	addr string
	log  *panicLog
}

// startLive serves srv on a fresh 127.0.0.1 listener. The server is closed
// when the test ends (if the test did not shut it down itself), and the
// test fails if the server logged an error: a handler panic or an accept
// error is a robustness bug here, since the tests' handlers never panic.
func startLive(t testing.TB, srv *riptide.Server) *liveServer {
	t.Helper()
	return startLiveWrapped(t, srv, nil)
}

// startLiveWrapped is startLive serving wrap(listener) when wrap is not nil
// (tls.NewListener, for instance).
func startLiveWrapped(t testing.TB, srv *riptide.Server, wrap func(net.Listener) net.Listener) *liveServer {
	t.Helper()
	ls := &liveServer{Server: srv, log: &panicLog{}}
	srv.Logger = slog.New(ls.log)
	// Registered before ServeTest's cleanup, so it runs after the server
	// stopped: the log is complete.
	t.Cleanup(func() {
		if n, recs := ls.log.count(); n > 0 {
			t.Errorf("server logged %d error(s), first: %q", n, recs)
		}
	})
	ls.addr = riptide.ServeTest(t, srv, riptide.TestServeOptions{Wrap: wrap}).Addr
	return ls
}

// serving waits until ls's engine is up and idle: a connection is opened,
// closed without a request, and seen closed by the server. A test that
// takes its resource baseline without a request first (healthy) takes it
// after this, so that the engine's own goroutines (the event loop's loops,
// scanner and pooled workers) are in the baseline rather than counted as
// left over at the end; startLive's Serve may not have run yet.
func serving(t testing.TB, ls *liveServer) {
	t.Helper()
	nc, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	var st riptide.Stats
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ls.Server.Stats(&st)
		if st.Accepted >= 1 && st.Closed >= st.Accepted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe connection was not closed by the server: %+v", st)
		}
	}
}

// usage is a snapshot of the process's resources.
type usage struct {
	goroutines int
	fds        int
	rssKB      int64
	heapKB     uint64
}

func (u usage) String() string {
	s := fmt.Sprintf("goroutines=%d fds=%d rss=%.1fMiB", u.goroutines, u.fds, float64(u.rssKB)/1024)
	if u.heapKB > 0 {
		s += fmt.Sprintf(" heap=%.1fMiB", float64(u.heapKB)/1024)
	}
	return s
}

// measure takes a snapshot. withHeap runs a GC first and reads the live
// heap (costly; only for soak samples).
func measure(withHeap bool) usage {
	u := usage{goroutines: runtime.NumGoroutine(), fds: openFDs(), rssKB: rssKB()}
	if withHeap {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		u.heapKB = ms.HeapAlloc / 1024
	}
	return u
}

// openFDs counts the entries of /proc/self/fd (-1 where there is none).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1 // the directory being read is one of them
}

// rssKB returns VmRSS from /proc/self/status in KiB (-1 where unknown).
func rssKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return -1
}

// Slack allowed over a baseline: the runtime and the testing package may
// start a goroutine of their own (timers, the race detector's), and the
// resolver or epoll instance may hold a descriptor opened meanwhile.
const (
	goroutineSlack = 2
	fdSlack        = 2
)

// backToBaseline waits (bounded) until the goroutine and fd counts are back
// to base, and fails the test with a goroutine dump if they are not.
func backToBaseline(t testing.TB, base usage, what string) usage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := measure(false)
		if u.goroutines <= base.goroutines+goroutineSlack && (base.fds < 0 || u.fds <= base.fds+fdSlack) {
			return u
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%s: resources not back to baseline after 20s: before %v, now %v\n%s",
				what, base, u, riptideStacks(buf))
			return u
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// riptideStacks keeps the goroutine stacks that mention riptide, to point
// at a leak without pages of runtime noise.
func riptideStacks(all []byte) string {
	var b strings.Builder
	for g := range strings.SplitSeq(string(all), "\n\n") {
		if strings.Contains(g, "riptide") && b.Len() < 64<<10 {
			b.WriteString(g)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// rawResponse is one response read off the wire.
type rawResponse struct {
	status int
	header textproto.MIMEHeader
	body   []byte
}

// hasToken reports whether header name lists token (comma-separated,
// case-insensitive).
func (r *rawResponse) hasToken(name, token string) bool {
	for _, v := range r.header.Values(name) {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				return true
			}
		}
	}
	return false
}

// errNoResponse: the connection ended cleanly before a response began.
var errNoResponse = errors.New("connection closed before a response")

// readResponse reads one response (interim 1xx included: the caller skips
// them). head says the request was HEAD; with headFromHeader set, a
// response carrying "X-Method: HEAD" is taken as an answer to HEAD too (the
// test handlers echo their method there), and an error status without
// X-Method as the server's last word on the connection. A response that is
// cut short is an error.
func readResponse(br *bufio.Reader, head, headFromHeader bool) (*rawResponse, error) {
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		if err == io.EOF {
			return nil, errNoResponse
		}
		return nil, err
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || len(code) != 3 || err != nil {
		return nil, fmt.Errorf("bad status line %q", line)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("status %d: bad header section: %w", status, err)
	}
	r := &rawResponse{status: status, header: hdr}
	if headFromHeader && hdr.Get("X-Method") == "HEAD" {
		head = true
	}
	if headFromHeader && hdr.Get("X-Method") == "" && status >= 400 {
		// An error made by the server, not the handler: the last response
		// on the connection, answering a request whose method is unknown
		// here (it may not even have parsed). Its
		// content is the rest of the stream: none for HEAD, else exactly
		// Content-Length bytes.
		r.body, err = io.ReadAll(br)
		if cl := hdr.Get("Content-Length"); err == nil && len(r.body) != 0 && cl != strconv.Itoa(len(r.body)) {
			err = fmt.Errorf("%d bytes of content with Content-Length %q", len(r.body), cl)
		}
		if err != nil {
			return nil, fmt.Errorf("status %d: %w", status, err)
		}
		return r, nil
	}
	if head || status/100 == 1 || status == 204 || status == 304 {
		return r, nil
	}
	switch {
	case r.hasToken("Transfer-Encoding", "chunked"):
		r.body, err = io.ReadAll(httputil.NewChunkedReader(br))
		if err == nil {
			// The chunked reader stops after the last chunk; the trailer
			// section ends at an empty line.
			for {
				var l string
				if l, err = tp.ReadLine(); err != nil || l == "" {
					break
				}
			}
		}
	case hdr.Get("Content-Length") != "":
		n, perr := strconv.ParseInt(hdr.Get("Content-Length"), 10, 64)
		if perr != nil || n < 0 || n > 1<<30 {
			return nil, fmt.Errorf("status %d: bad Content-Length %q", status, hdr.Get("Content-Length"))
		}
		r.body = make([]byte, n)
		_, err = io.ReadFull(br, r.body)
	default:
		r.body, err = io.ReadAll(br)
	}
	if err != nil {
		return nil, fmt.Errorf("status %d: body: %w", status, err)
	}
	return r, nil
}

// finalResponse reads responses until a final (non-1xx) one.
func finalResponse(br *bufio.Reader, head bool) (*rawResponse, error) {
	for {
		r, err := readResponse(br, head, false)
		if err != nil || r.status/100 != 1 {
			return r, err
		}
	}
}

// keepAliveClient is a raw HTTP/1.1 client on one connection.
type keepAliveClient struct {
	nc net.Conn
	br *bufio.Reader
}

func dialClient(addr string) (*keepAliveClient, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &keepAliveClient{nc: nc, br: bufio.NewReaderSize(nc, 16<<10)}, nil
}

// do sends req and reads the final response, within timeout.
func (c *keepAliveClient) do(req []byte, head bool, timeout time.Duration) (*rawResponse, error) {
	c.nc.SetDeadline(time.Now().Add(timeout))
	if _, err := c.nc.Write(req); err != nil {
		return nil, err
	}
	return finalResponse(c.br, head)
}

func (c *keepAliveClient) Close() error { return c.nc.Close() }

// get is a minimal keep-alive GET request for path.
func get(path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
}

// expectBody checks a response's status and body.
func expectBody(r *rawResponse, status int, body []byte) error {
	if r.status != status || !bytes.Equal(r.body, body) {
		return fmt.Errorf("got %d with %d-byte body %.40q, want %d with %d bytes", r.status, len(r.body), r.body, status, len(body))
	}
	return nil
}

// percentiles formats latency percentiles for t.Log.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	slices.Sort(d)
	p := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return fmt.Sprintf("n=%d p50=%v p90=%v p99=%v max=%v", len(d), p(0.50), p(0.90), p(0.99), d[len(d)-1])
}
