package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// FuzzClient plays a scripted malicious server against Do, DoStream and
// RoundTrip sharing one pool. Each request carries a unique ID (Fz-Id);
// the server echoes it (Fz-Echo) whenever it answers properly. The client
// may fail any request, but it must not panic, must not allocate without
// bound, and must never hand a request a response meant for another: a
// response echoing another ID, or one without an echo when the server
// answered that request properly, is a failure.
//
// The input is a script: a flags byte (see fuzzClientConfig), then per
// request a kind byte (low four bits: the answer, see fuzzKind; high four:
// the API, see fuzzAPIs), a parameter byte, and for the kinds that send raw bytes, parameter
// bytes of them.
//
// CI runs the seed corpus only; fuzz locally for a minute or so:
//
//	go test -run '^$' -fuzz FuzzClient -fuzztime 60s -parallel 2 ./client
func FuzzClient(f *testing.F) {
	fs := &fuzzServer{ops: map[int]fuzzOp{}, active: map[int]int{}}
	fs.cond.L = &fs.mu
	fs.srv = newRawServer(f, fs.handle)
	f.Fuzz(func(t *testing.T, script []byte) {
		flags, ops := parseFuzzScript(script)
		c := fuzzClientConfig(flags)
		defer c.CloseIdleConnections()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, op := range ops {
			id := int(fs.nextID.Add(1))
			fs.mu.Lock()
			fs.ops[id] = op
			fs.mu.Unlock()
			fs.check(t, id, op, fuzzAPIs[op.api](c, fs.srv.url("/"), id))
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		// The server sends at most a few MiB per input; a client sizing
		// buffers from the peer's claims would exceed this at once.
		if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
			t.Fatalf("%d MiB allocated for one script", n>>20)
		}
	})
}

// fuzzKind is how the server answers one request. The seed corpus
// (testdata/fuzz/FuzzClient) covers each kind through each API.
type fuzzKind byte

const (
	kindProper     fuzzKind = iota // Content-Length, param sets the body size
	kindChunked                    // chunked, with a trailer
	kindTwice                      // the response twice in one write
	kindExtraRaw                   // the response then raw bytes, one write
	kindTwiceLater                 // the response, then again in a second write
	kind1xx                        // param interim responses, then the response
	kindBig1xx                     // param%40 interim responses of 56 KB each
	kindRaw                        // raw bytes, then close
	kindCut                        // the response cut at param, then close
	kindClaim                      // a huge Content-Length, a short body, close
	kindUntilClose                 // no framing: body until close
	kindClose                      // Connection: close
	kindGzip                       // Content-Encoding: gzip
	kindSwitch                     // 101 Switching Protocols, then close
	numKinds
)

// rawKind reports the kinds whose answer includes fuzzer bytes.
func (k fuzzKind) rawKind() bool { return k == kindExtraRaw || k == kindRaw }

type fuzzOp struct {
	kind  fuzzKind
	api   int // index in fuzzAPIs
	param byte
	raw   []byte // for raw kinds; holds no 'z', so never "Fz-Echo"
}

func parseFuzzScript(b []byte) (flags byte, ops []fuzzOp) {
	if len(b) == 0 {
		return 0, nil
	}
	flags, b = b[0], b[1:]
	for len(b) >= 2 && len(ops) < 16 {
		op := fuzzOp{kind: fuzzKind(b[0]&0x0f) % numKinds, api: int(b[0]>>4) % len(fuzzAPIs), param: b[1]}
		b = b[2:]
		if op.kind.rawKind() {
			n := min(int(op.param), len(b))
			op.raw = bytes.Map(func(r rune) rune {
				if r == 'z' || r == 'Z' {
					return 'y'
				}
				return r
			}, b[:n])
			b = b[n:]
		}
		ops = append(ops, op)
	}
	return flags, ops
}

// fuzzClientConfig builds the client for one script: pipelining, gzip, a
// small body limit and no retries are each switched by a flag bit.
func fuzzClientConfig(flags byte) *Client {
	c := &Client{Timeout: 10 * time.Second} // a safety net against hangs
	if flags&1 != 0 {
		c.Pipeline = 4
	}
	if flags&2 != 0 {
		c.Gzip = true
	}
	if flags&4 != 0 {
		c.MaxResponseBodySize = 1 << 10
	}
	if flags&8 != 0 {
		c.MaxRetries = -1
	}
	return c
}

// fuzzResult is what one request got: err, or a status, the echoed ID
// ("" when absent) and as much of the body as was read.
type fuzzResult struct {
	err    error
	status int
	echo   string
	body   string
}

var fuzzAPIs = []func(c *Client, url string, id int) fuzzResult{
	func(c *Client, url string, id int) fuzzResult { // Do
		var req Request
		var resp Response
		req.SetURL(url)
		req.AddHeader("Fz-Id", strconv.Itoa(id))
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			return fuzzResult{err: err}
		}
		return fuzzResult{status: resp.StatusCode(), echo: string(resp.Header("Fz-Echo")), body: string(resp.Body())}
	},
	func(c *Client, url string, id int) fuzzResult { // DoStream
		var req Request
		var resp Response
		defer resp.Reset()
		req.SetURL(url)
		req.AddHeader("Fz-Id", strconv.Itoa(id))
		if err := c.DoStream(context.Background(), &req, &resp); err != nil {
			return fuzzResult{err: err}
		}
		r := fuzzResult{status: resp.StatusCode(), echo: string(resp.Header("Fz-Echo"))}
		b, err := io.ReadAll(io.LimitReader(resp.BodyStream(), 1<<20))
		r.body = string(b)
		if err != nil {
			r.body = "" // the head was matched; the body is incomplete
		}
		return r
	},
	func(c *Client, url string, id int) fuzzResult { // RoundTrip
		hreq, _ := http.NewRequest("GET", url, nil)
		hreq.Header.Set("Fz-Id", strconv.Itoa(id))
		hr, err := c.RoundTrip(hreq)
		if err != nil {
			return fuzzResult{err: err}
		}
		defer hr.Body.Close()
		r := fuzzResult{status: hr.StatusCode, echo: hr.Header.Get("Fz-Echo")}
		b, err := io.ReadAll(io.LimitReader(hr.Body, 1<<20))
		r.body = string(b)
		if err != nil {
			r.body = ""
		}
		return r
	},
}

// fuzzServer answers each request as the op registered for its Fz-Id.
type fuzzServer struct {
	srv    *rawServer
	nextID atomic.Int64
	mu     sync.Mutex
	cond   sync.Cond
	ops    map[int]fuzzOp
	active map[int]int // handlers running per ID; -1 once one has finished
}

func (fs *fuzzServer) handle(c net.Conn, req *h1.Request, body []byte) bool {
	id, err := strconv.Atoi(string(req.Get("Fz-Id")))
	fs.mu.Lock()
	op, ok := fs.ops[id]
	fs.active[id] = max(fs.active[id], 0) + 1
	fs.mu.Unlock()
	keep := false
	if err == nil && ok {
		keep = fs.answer(c, id, op)
	}
	if !keep {
		c.Close() // before the client is told the answer is complete
	}
	fs.mu.Lock()
	if fs.active[id]--; fs.active[id] == 0 {
		fs.active[id] = -1
	}
	fs.cond.Broadcast()
	fs.mu.Unlock()
	return keep
}

// answer writes the answer for op; it reports whether the connection
// stays open.
func (fs *fuzzServer) answer(c net.Conn, id int, op fuzzOp) bool {
	proper := properResponse(id, op)
	switch op.kind {
	case kindProper, kindChunked, kindGzip:
		c.Write([]byte(proper))
	case kindTwice:
		c.Write([]byte(proper + proper))
	case kindExtraRaw:
		c.Write(append([]byte(proper), op.raw...))
	case kindTwiceLater:
		c.Write([]byte(proper))
		c.Write([]byte(proper))
	case kind1xx:
		c.Write([]byte(strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", int(op.param)) + proper))
	case kindBig1xx:
		head := "HTTP/1.1 103 Early Hints\r\n" + strings.Repeat("Link: "+strings.Repeat("a", 8000)+"\r\n", 7) + "\r\n"
		for range int(op.param) % 40 {
			if _, err := c.Write([]byte(head)); err != nil {
				return false
			}
		}
		c.Write([]byte(proper))
	case kindRaw:
		c.Write(op.raw)
		return false
	case kindCut:
		c.Write([]byte(proper[:int(op.param)%len(proper)]))
		return false
	case kindClaim:
		claims := []string{"100000000000", "4611686018427387904", strconv.Itoa(60 << 20), strconv.FormatInt(1<<31, 10)}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nFz-Echo: %d\r\nContent-Length: %s\r\n\r\nid=%d;", id, claims[int(op.param)%len(claims)], id)
		return false
	case kindUntilClose, kindClose, kindSwitch:
		c.Write([]byte(proper))
		return false
	}
	return true
}

var fuzzGzip struct {
	sync.Mutex
	w *gzip.Writer
}

// fuzzBody is the body of a proper answer to request id.
func fuzzBody(id int, param byte) string {
	return fmt.Sprintf("id=%d;", id) + strings.Repeat(".", int(param%4)*700)
}

// properResponse is a well-formed answer to request id, framed as op says.
func properResponse(id int, op fuzzOp) string {
	body := fuzzBody(id, op.param)
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nFz-Echo: %d\r\n", id)
	switch op.kind {
	case kindChunked:
		return fmt.Sprintf("%sTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\nFz-Trailer: %d\r\n\r\n", head, len(body), body, id)
	case kindUntilClose:
		return head + "\r\n" + body
	case kindClose:
		return fmt.Sprintf("%sConnection: close\r\nContent-Length: %d\r\n\r\n%s", head, len(body), body)
	case kindSwitch:
		return fmt.Sprintf("HTTP/1.1 101 Switching Protocols\r\nFz-Echo: %d\r\nConnection: Upgrade\r\nUpgrade: fuzz\r\n\r\n%s", id, body)
	case kindGzip:
		var zb bytes.Buffer
		fuzzGzip.Lock()
		if fuzzGzip.w == nil {
			fuzzGzip.w = gzip.NewWriter(&zb)
		} else {
			fuzzGzip.w.Reset(&zb)
		}
		fuzzGzip.w.Write([]byte(body))
		fuzzGzip.w.Close()
		fuzzGzip.Unlock()
		return fmt.Sprintf("%sContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", head, zb.Len(), zb.Bytes())
	}
	return fmt.Sprintf("%sContent-Length: %d\r\n\r\n%s", head, len(body), body)
}

// check fails t if request id got a response that is not its own, then,
// after a response, waits until the server has written everything it
// meant to for id, so that the next request starts after any unsolicited
// bytes were sent (bytes still in flight when a request goes out cannot be
// told from its response, by any HTTP/1.1 client).
func (fs *fuzzServer) check(t *testing.T, id int, op fuzzOp, r fuzzResult) {
	if r.err != nil {
		return
	}
	want := strconv.Itoa(id)
	switch {
	case r.echo == "" && !op.kind.rawKind():
		t.Fatalf("request %d (%v) got a response without its echo: status %d, body %q", id, op, r.status, r.body)
	case r.echo != "" && r.echo != want:
		t.Fatalf("request %d (%v) got the response to request %s", id, op, r.echo)
	case r.echo == want && r.status == 200 && r.body != "" && r.body != fuzzBody(id, op.param):
		// Gzip may be left encoded (RoundTrip without it, DoStream).
		if op.kind != kindGzip {
			t.Fatalf("request %d (%v): body %q", id, op, r.body)
		}
	}
	fs.mu.Lock()
	for fs.active[id] > 0 {
		fs.cond.Wait()
	}
	delete(fs.ops, id)
	delete(fs.active, id)
	fs.mu.Unlock()
}
