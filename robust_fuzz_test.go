package riptide_test

// Random and mutated request heads and bodies through a real server, one
// connection per input: every connection must be answered or closed (never
// left hanging), every byte the server sends must parse as HTTP/1.1
// responses, a canned error response must say Connection: close and be the
// last thing on the connection, nothing may panic, and afterwards the
// server's goroutines and descriptors must be back to their baseline.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/probe"
)

// robustHandler exercises the response paths a fuzzed request can reach:
// buffered, streamed (chunked) and declared-length bodies, body reads of
// every kind, query and cookie parsing. Every response it makes carries
// X-Method, which tells handler answers from the server's canned ones.
func robustHandler(c *riptide.Ctx) {
	c.SetHeader("X-Method", string(c.Method()))
	var n int
	var err error
	path := c.Path()
	switch {
	case bytes.HasPrefix(path, []byte("/readbody")):
		var b []byte
		b, err = c.ReadBody()
		n = len(b)
	case bytes.HasPrefix(path, []byte("/ignore")):
		// Leave the body unread: the server must drain it or close.
	default:
		var m int64
		m, err = io.Copy(io.Discard, c.Body())
		n = int(m)
	}
	if err != nil {
		c.SetStatus(400)
		c.WriteString("body: " + err.Error() + "\n")
		return
	}
	args := 0
	for range c.QueryArgs() {
		args++
	}
	for range c.Cookies() {
		args++
	}
	switch {
	case bytes.HasPrefix(path, []byte("/stream")):
		for i := range 3 {
			fmt.Fprintf(c, "part %d of a streamed body\n", i)
			c.Flush()
		}
	case bytes.HasPrefix(path, []byte("/big")):
		c.Write(bigBody[:100<<10])
	case bytes.HasPrefix(path, []byte("/huge")):
		c.Write(bigBody) // blocks in the socket write until the client reads
	case bytes.HasPrefix(path, []byte("/length")):
		c.SetContentLength(5)
		c.WriteString("fixed")
	case bytes.HasPrefix(path, []byte("/empty")):
		c.SetStatus(204)
	default:
		fmt.Fprintf(c, "read %d body bytes, %d args\n", n, args)
	}
}

// bigBody is a large response body (4 MiB of a repeating pattern).
var bigBody = bytes.Repeat([]byte("riptide robustness 0123456789abcdef\n"), (4<<20)/36)

// fuzzSeeds are well-formed and famous malformed requests to mutate: every
// raw request of the probe suite, and requests aimed at each handler path.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range probe.Checks() {
		if raw := c.RawRequest(); len(raw) > 0 && len(raw) < 20000 {
			seeds = append(seeds, raw)
		}
	}
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /stream?x=1&y=%20 HTTP/1.1\r\nHost: a\r\nCookie: a=1; b=\"2\"\r\n\r\n",
		"HEAD /big HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /length HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
		"POST /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello worldGET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
		"POST /readbody HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
		"PUT /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
		"GET /empty HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
		"GET http://a.example/stream HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n",
		"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// Fragments the mutator splices in: framing fields, delimiters, numbers
// that overflow, control bytes.
var fuzzFragments = []string{
	"\r\n", "\n", "\r", "\x00", " ", "\t", ":", ";", ",", "\"", "\x7f", "\x80", "\xff",
	"\r\n\r\n", "Content-Length: 5\r\n", "Content-Length: 0\r\n", "Content-Length: -1\r\n",
	"Content-Length: 99999999999999999999\r\n", "Transfer-Encoding: chunked\r\n",
	"Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding: chunked, identity\r\n",
	"Expect: 100-continue\r\n", "Connection: close\r\n", "Connection: keep-alive\r\n",
	"Host: a\r\n", "Host: \r\n", "0\r\n\r\n", "ffffffffffffffffff\r\n", "5\r\nhello\r\n",
	"1;a=\"b\"\r\nx\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.0", "HTTP/1.1", "HTTP/9.9",
	" HTTP/1.1\r\n", "%00", "%zz", "/../", "?a=1&b=%41", "Cookie: a=1;;b\r\n", " \r\n x\r\n",
}

// mutate returns a copy of seed with 1..5 random edits.
func mutate(rng *rand.Rand, seed []byte, seeds [][]byte) []byte {
	b := bytes.Clone(seed)
	for range 1 + rng.IntN(5) {
		if len(b) == 0 {
			b = append(b, fuzzFragments[rng.IntN(len(fuzzFragments))]...)
			continue
		}
		i := rng.IntN(len(b))
		switch rng.IntN(9) {
		case 0: // flip a bit
			b[i] ^= 1 << rng.IntN(8)
		case 1: // replace a byte with an interesting one
			f := fuzzFragments[rng.IntN(13)]
			b[i] = f[0]
		case 2, 3: // insert a fragment
			f := fuzzFragments[rng.IntN(len(fuzzFragments))]
			b = append(b[:i], append([]byte(f), b[i:]...)...)
		case 4: // delete a range
			j := min(len(b), i+1+rng.IntN(16))
			b = append(b[:i], b[j:]...)
		case 5: // duplicate a range
			j := min(len(b), i+1+rng.IntN(64))
			b = append(b[:j], append(bytes.Clone(b[i:j]), b[j:]...)...)
		case 6: // truncate
			b = b[:i]
		case 7: // splice with another seed
			o := seeds[rng.IntN(len(seeds))]
			b = append(b[:i], o[rng.IntN(len(o)):]...)
		case 8: // change a digit
			for k := i; k < len(b); k++ {
				if b[k] >= '0' && b[k] <= '9' {
					b[k] = "0123456789abcdefABCDEF+-"[rng.IntN(24)]
					break
				}
			}
		}
		if len(b) > 256<<10 {
			b = b[:256<<10]
		}
	}
	return b
}

// randomRequest builds a request from random parts, mostly well-formed so
// that heads reach the framing and body code.
func randomRequest(rng *rand.Rand) []byte {
	var b bytes.Buffer
	for range 1 + rng.IntN(3) { // pipelined requests
		methods := []string{"GET", "POST", "PUT", "HEAD", "OPTIONS", "DELETE", "PATCH", "TRACE", "CONNECT", "get", "G T", "", "XYZZY"}
		paths := []string{"/", "/readbody", "/ignore", "/stream", "/big", "/length", "/empty", "*", "http://h/x", "h:1", "/a?b=c&d=%41+e", "/%", "/\x01", ""}
		b.WriteString(methods[weighted(rng, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)])
		b.WriteByte(' ')
		b.WriteString(paths[weighted(rng, 4, 4, 4, 4, 2, 4, 2, 1, 1, 1, 3, 1, 1, 1)])
		b.WriteString([]string{" HTTP/1.1\r\n", " HTTP/1.0\r\n", " HTTP/1.1\n", " HTTP/2\r\n", "\r\n"}[weighted(rng, 12, 3, 1, 1, 1)])
		if rng.IntN(8) != 0 {
			b.WriteString("Host: example.com\r\n")
		}
		body := make([]byte, []int{0, 1, 10, 100, 5000, 70000}[rng.IntN(6)])
		for i := range body {
			body[i] = byte('a' + rng.IntN(26))
		}
		chunked := false
		switch rng.IntN(6) {
		case 0, 1:
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body)+[]int{0, -1, 1, 1000}[weighted(rng, 12, 1, 1, 1)])
		case 2, 3:
			b.WriteString("Transfer-Encoding: chunked\r\n")
			chunked = true
		case 4:
			fmt.Fprintf(&b, "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(body))
			chunked = true
		}
		for range rng.IntN(6) {
			names := []string{"X-A", "Cookie", "Expect", "Connection", "Accept", "X_Under", "Trailer", "Content-Type", "Range"}
			vals := []string{"1", "a=1; b=2", "100-continue", "close", "keep-alive, Upgrade", "*/*", "", "x\x01y", strings.Repeat("v", 9000)}
			fmt.Fprintf(&b, "%s: %s\r\n", names[rng.IntN(len(names))], vals[weighted(rng, 3, 3, 2, 2, 2, 2, 1, 1, 1)])
		}
		b.WriteString("\r\n")
		if chunked {
			for len(body) > 0 {
				n := min(len(body), 1+rng.IntN(9000))
				ext := ""
				if rng.IntN(8) == 0 {
					ext = ";name=value"
				}
				fmt.Fprintf(&b, "%x%s\r\n", n, ext)
				b.Write(body[:n])
				b.WriteString("\r\n")
				body = body[n:]
			}
			if rng.IntN(6) != 0 {
				b.WriteString("0\r\n")
				if rng.IntN(4) == 0 {
					b.WriteString("X-Trailer: v\r\n")
				}
				b.WriteString("\r\n")
			}
		} else {
			b.Write(body)
		}
	}
	return b.Bytes()
}

// weighted picks an index with the given relative weights.
func weighted(rng *rand.Rand, w ...int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	r := rng.IntN(total)
	for i, x := range w {
		if r < x {
			return i
		}
		r -= x
	}
	return len(w) - 1
}

// fuzzOutcome is what one connection did.
type fuzzOutcome struct {
	responses int
	canned    int  // server-made error responses
	closed    bool // closed without any response
	reset     bool
}

// clientWait bounds how long a fuzz client waits for the server to finish
// the connection; the server's own timeouts (fuzzServer) are far shorter,
// so reaching it means the server left the connection hanging.
const clientWait = 20 * time.Second

// exchange sends in on a fresh connection (half-closing after it when
// halfClose is set), reads everything until the server closes, and checks
// what came back.
func exchange(addr string, in []byte, halfClose bool, rng *rand.Rand) (fuzzOutcome, error) {
	var out fuzzOutcome
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return out, fmt.Errorf("dial: %w", err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(clientWait))
	// Write in up to three pieces so heads also arrive split; the server may
	// close early (a rejected head), so write errors are not failures.
	readDone := make(chan struct{})
	var raw []byte
	var rerr error
	go func() {
		defer close(readDone)
		raw, rerr = io.ReadAll(nc)
	}()
	rest := in
	for k := 0; len(rest) > 0 && k < 3; k++ {
		n := len(rest)
		if k < 2 && n > 1 && rng.IntN(3) == 0 {
			n = 1 + rng.IntN(n-1)
		}
		if _, err := nc.Write(rest[:n]); err != nil {
			break
		}
		rest = rest[n:]
	}
	if halfClose {
		nc.(*net.TCPConn).CloseWrite()
	}
	<-readDone
	if rerr != nil {
		if isTimeoutErr(rerr) {
			return out, fmt.Errorf("connection neither answered nor closed within %v (got %d bytes: %.200q)", clientWait, len(raw), raw)
		}
		if !errors.Is(rerr, syscall.ECONNRESET) {
			return out, fmt.Errorf("read: %w", rerr)
		}
		// The server closed with our bytes unread; the kernel then resets
		// and may drop part of what was sent. Check only complete responses.
		out.reset = true
	}
	if len(raw) == 0 {
		out.closed = true
		return out, nil
	}
	if refused, err := h2cRefusal(raw, in, out.reset); refused || err != nil {
		out.canned++
		return out, err
	}
	return out, checkStream(raw, &out, in)
}

// h2cRefusal reports whether raw is the HTTP/2 refusal a server without h2c
// sends a connection opening with the HTTP/2 preface's request line
// (serve.go, refuseH2Preface): SETTINGS, then GOAWAY HTTP_1_1_REQUIRED with
// its reason, and nothing after; with reset, a part of it. It is an error
// for any other input to get it.
func h2cRefusal(raw, in []byte, reset bool) (bool, error) {
	const settings = "\x00\x00\x00\x04\x00\x00\x00\x00\x00"
	if !bytes.HasPrefix(raw, []byte(settings)) {
		return false, nil
	}
	if !bytes.HasPrefix(in, []byte("PRI * HTTP/2.0\r\n\r\n")) {
		return true, fmt.Errorf("HTTP/2 frames answered a request that is not the HTTP/2 preface\n\tsent: %.300q\n\tgot: %.300q", in, raw)
	}
	ga := raw[len(settings):]
	if reset && len(ga) < 17 {
		return true, nil
	}
	n := int(ga[0])<<16 | int(ga[1])<<8 | int(ga[2])
	if len(ga) < 17 || ga[3] != 0x7 || string(ga[13:17]) != "\x00\x00\x00\x0d" || !reset && len(ga) != 9+n {
		return true, fmt.Errorf("the HTTP/2 refusal is not SETTINGS + GOAWAY HTTP_1_1_REQUIRED: %.300q", raw)
	}
	return true, nil
}

// checkStream parses the bytes a server sent on one connection as a
// sequence of responses.
func checkStream(raw []byte, out *fuzzOutcome, in []byte) error {
	br := bufio.NewReader(bytes.NewReader(raw))
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return nil
		}
		r, err := readResponse(br, false, true)
		if err != nil {
			if out.reset {
				return nil // truncated by the reset
			}
			return fmt.Errorf("response %d: %v\nsent: %.300q\ngot: %.600q", out.responses+1, err, in, raw)
		}
		if r.status/100 == 1 {
			if r.status != 100 {
				return fmt.Errorf("unexpected interim %d", r.status)
			}
			continue
		}
		out.responses++
		// A response without X-Method was made by the server itself: an
		// error (which must close), or compat's answer to OPTIONS *.
		if r.header.Get("X-Method") == "" && r.status >= 400 {
			out.canned++
			if !r.hasToken("Connection", "close") {
				return fmt.Errorf("canned %d without Connection: close\nsent: %.300q\ngot: %.600q", r.status, in, raw)
			}
		}
		if r.hasToken("Connection", "close") {
			if rest, _ := io.ReadAll(br); len(rest) > 0 {
				return fmt.Errorf("%d bytes after a Connection: close response (status %d): %.200q\nsent: %.300q", len(rest), r.status, rest, in)
			}
			return nil
		}
	}
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// fuzzServer is the server configuration of the fuzz and fault tests:
// defaults except short timeouts, so that connections a client leaves
// incomplete end within a second, and a body limit to reach 413.
func fuzzServer() *riptide.Server {
	return &riptide.Server{
		Handler:            riptide.HandlerFunc(robustHandler),
		ReadHeaderTimeout:  500 * time.Millisecond,
		ReadBodyTimeout:    500 * time.Millisecond,
		IdleTimeout:        500 * time.Millisecond,
		WriteTimeout:       5 * time.Second,
		MaxRequestBodySize: 1 << 20,
	}
}

func TestRobustFuzzedRequests(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	for _, api := range robustAPIs {
		t.Run(api.name, func(t *testing.T) {
			total := size(6_000, 1_000_000)
			if api.name == "compat" {
				total = size(3_000, 250_000)
			}
			fuzzRequests(t, api.handler, total)
		})
	}
}

func fuzzRequests(t *testing.T, h riptide.Handler, total int) {
	workers := 32
	raiseNoFile(t, 4096)
	// Short timeouts: the clients that keep their side open wait for them.
	// A timeout that fires early only turns an answer into a 408 or a close,
	// which the checks accept.
	srv := fuzzServer()
	srv.Handler = h
	srv.ReadHeaderTimeout, srv.ReadBodyTimeout, srv.IdleTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	ls := startLive(t, srv)
	seeds := fuzzSeeds()
	// Let the accept loop and clock settle before taking the baseline.
	warm, err := dialClient(ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	warm.do(get("/"), false, 10*time.Second)
	warm.Close()
	time.Sleep(100 * time.Millisecond)
	base := backToBaseline(t, measure(false), "warm-up")

	var (
		next, ran                         atomic.Int64
		responses, canned, closed, resets atomic.Int64
		failures                          atomic.Int64
		mu                                sync.Mutex
		firstErrs                         []string
		wg                                sync.WaitGroup
	)
	start := time.Now()
	// On a starved CI machine the short variant stops at its time budget
	// rather than its count; what ran is checked all the same.
	stopAt := start.Add(time.Duration(size(15, 3600)) * time.Second)
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RIPTIDE_FUZZ_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (RIPTIDE_FUZZ_SEED=%d replays the inputs)", seed, seed)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for next.Add(1) <= int64(total) && failures.Load() < 10 && time.Now().Before(stopAt) {
				var in []byte
				if rng.IntN(2) == 0 {
					in = randomRequest(rng)
				} else {
					in = mutate(rng, seeds[rng.IntN(len(seeds))], seeds)
				}
				// Most clients half-close; one in sixteen keeps its side open
				// and relies on the server's timeouts to end the connection.
				ran.Add(1)
				out, err := exchange(ls.addr, in, rng.IntN(16) != 0, rng)
				if err != nil {
					failures.Add(1)
					mu.Lock()
					firstErrs = append(firstErrs, err.Error())
					mu.Unlock()
					continue
				}
				responses.Add(int64(out.responses))
				canned.Add(int64(out.canned))
				if out.closed {
					closed.Add(1)
				}
				if out.reset {
					resets.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range firstErrs {
		t.Error(e)
	}
	after := backToBaseline(t, base, "after fuzzing")
	t.Logf("%d inputs in %v: %d responses (%d canned errors), %d closed unanswered, %d reset, %d failures; before %v, after %v",
		ran.Load(), time.Since(start).Round(time.Millisecond), responses.Load(), canned.Load(),
		closed.Load(), resets.Load(), failures.Load(), base, after)
}
