package h2

// The harness of the frame-level tests (attack_test.go, flood_test.go,
// flowflood_test.go, stall_test.go, valid_test.go, block_test.go): the
// engine alone, serving a loopback listener (cleartext with prior
// knowledge, or TLS with ALPN h2) with NewConn and Serve, no
// riptide.Server above it; the routes it serves on the Stream API; and a
// hostile client (internal/h2test's Attacker) that writes whatever frames
// a test asks for.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
)

// Limits every target is served with; the attack tests check them.
const (
	testMaxStreams     = h2test.MaxStreams     // SETTINGS_MAX_CONCURRENT_STREAMS
	testMaxHeaderBytes = h2test.MaxHeaderBytes // request header list size limit
)

// testApp is the state behind the test routes, so that tests can observe
// what reached a handler. Its ServeStream serves, on every target:
//
//	GET /       200 "Hello, World!" (text/plain), after the request stream ends
//	POST /      200, echoes the request body
//	GET /slow   holds the handler for slowHold (ignoring resets), then 200 "ok"
//	GET /bomb   records the size of the header list it received, then 200
//	POST /gated reads the body as testApp.gate says (gatedRead), then 200 "ok"
//	GET /hold   waits for a token from testApp.hold, then 200 "ok"
//
// A request whose header list is over MaxHeaderBytes is answered 431
// before any route, as the server's stream sequence answers it.
type testApp struct {
	slow       h2test.Handlers // the handlers of /slow
	bombCalls  atomic.Int64    // requests that reached /bomb
	bombMaxHdr atomic.Int64    // largest header list (name+value bytes) seen by /bomb
	// gate paces /gated: each value is the total of body bytes the client
	// has sent; the handler reads all but the last of them.
	gate        chan int64
	hold        chan struct{} // each /hold handler takes one before it answers
	holdEntered atomic.Int64  // /hold handlers started
}

const (
	helloBody = h2test.HelloBody
	slowHold  = 5 * time.Millisecond
)

func newTestApp() *testApp {
	return &testApp{gate: make(chan int64, 1<<12), hold: make(chan struct{})}
}

func (a *testApp) ServeStream(st *Stream) {
	if st.HeadTooLarge() {
		respond(st, 431, "")
		return
	}
	switch st.Path() {
	case "/":
		if st.Method() == http.MethodPost {
			echo(st)
			return
		}
		// Wait for the end of the request stream even on GET, so that a
		// response never races frames the client still sends on it.
		_, _ = io.Copy(io.Discard, bodyReader{st})
		respond(st, 200, helloBody)
	case "/slow":
		a.slow.Enter()
		time.Sleep(slowHold)
		a.slow.Leave()
		respond(st, 200, "ok")
	case "/bomb":
		n := 0
		for _, f := range st.Fields() {
			n += len(f.Name) + len(f.Value)
		}
		a.bombCalls.Add(1)
		for m := a.bombMaxHdr.Load(); int64(n) > m && !a.bombMaxHdr.CompareAndSwap(m, int64(n)); m = a.bombMaxHdr.Load() {
		}
		respond(st, 200, "")
	case "/gated":
		if a.gatedRead(bodyReader{st}) != nil {
			respond(st, 500, "")
			return
		}
		respond(st, 200, "ok")
	case "/hold":
		if a.holdOn() {
			respond(st, 200, "ok")
		}
	default:
		respond(st, 404, "")
	}
}

// gatedRead reads body as the test that drives /gated says: for each
// total s sent, it reads up to s-1 bytes, so that one byte received is
// always left unread; -1 reads the rest.
func (a *testApp) gatedRead(body io.Reader) error {
	buf := make([]byte, 32<<10)
	var read int64
	for {
		var s int64
		select {
		case s = <-a.gate:
		case <-time.After(attackBound):
			return errors.New("gate: nothing to read")
		}
		if s < 0 {
			_, err := io.Copy(io.Discard, body)
			return err
		}
		for read < s-1 {
			n, err := body.Read(buf[:min(int64(len(buf)), s-1-read)])
			read += int64(n)
			if err != nil {
				return err
			}
		}
	}
}

// holdOn waits for the test to hand the handler a token; false when none
// came (the test failed).
func (a *testApp) holdOn() bool {
	a.holdEntered.Add(1)
	select {
	case <-a.hold:
		return true
	case <-time.After(attackBound):
		return false
	}
}

// bodyReader is a stream's request body as an io.Reader.
type bodyReader struct{ st *Stream }

func (b bodyReader) Read(p []byte) (int, error) { return b.st.ReadBody(p) }

// respond answers st with status and body, ending the stream.
func respond(st *Stream, status int, body string) {
	h := Head{Status: status, ContentLength: int64(len(body)), Fields: []Field{{Name: "content-type", Value: "text/plain; charset=utf-8"}}}
	_ = st.WriteHead(&h, []byte(body), true)
}

// echo answers st with its request body, as it comes.
func echo(st *Stream) {
	if st.WriteHead(&Head{Status: 200, ContentLength: -1}, nil, false) != nil {
		return
	}
	buf := make([]byte, 16<<10)
	for {
		n, err := st.ReadBody(buf)
		if n > 0 && st.WriteData(buf[:n], false) != nil {
			return
		}
		if err != nil {
			break
		}
	}
	_ = st.EndStream()
}

// handlerFunc is a function as a Handler.
type handlerFunc func(*Stream)

func (f handlerFunc) ServeStream(st *Stream) { f(st) }

// target is one way of serving the engine: on its workers or with
// InlineHandlers, in cleartext (h2c) or over TLS.
type target struct {
	name   string // "workers" or "inline"
	inline bool
}

var targets = []target{{name: "workers"}, {name: "inline", inline: true}}

// instance is a running target.
type instance struct {
	name string // the target's name
	addr string // 127.0.0.1:port
	tls  bool
	app  *testApp
}

// startTarget serves h (nil: a fresh testApp) with the engine on a
// loopback port until the test ends: cfg configured with the test limits,
// then by configure (if not nil).
func startTarget(t testing.TB, tg target, useTLS bool, h Handler, configure func(*Config)) *instance {
	t.Helper()
	in := &instance{name: tg.name, tls: useTLS}
	if h == nil {
		in.app = newTestApp()
		h = in.app
	}
	cfg := &Config{Handler: h, MaxConcurrentStreams: testMaxStreams, MaxHeaderBytes: testMaxHeaderBytes, InlineHandlers: tg.inline}
	if configure != nil {
		configure(cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in.addr = ln.Addr().String()
	var tlsConf *tls.Config
	if useTLS {
		tlsConf = &tls.Config{Certificates: []tls.Certificate{h2test.Cert(t)}, NextProtos: []string{"h2"}}
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					c.Close()
					mu.Lock()
					delete(conns, c)
					mu.Unlock()
				}()
				nc := c
				if tlsConf != nil {
					tc := tls.Server(c, tlsConf)
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					err := tc.HandshakeContext(ctx)
					cancel()
					if err != nil {
						return
					}
					nc = tc
				}
				NewConn(cfg, nc, nil, nil, nil).Serve(false, nil)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return in
}

// forEachTarget runs f as a subtest for every target in both modes.
func forEachTarget(t *testing.T, f func(t *testing.T, in *instance)) {
	for _, tg := range targets {
		h2test.ForEachMode(t, tg.name, func(t *testing.T, useTLS bool) {
			f(t, startTarget(t, tg, useTLS, nil, nil))
		})
	}
}

func (in *instance) mode() string { return h2test.Mode(in.tls) }

func (in *instance) scheme() string {
	if in.tls {
		return "https"
	}
	return "http"
}

// assertServes checks that in answers a fresh HTTP/2 connection: GET / is
// 200 "Hello, World!" over HTTP/2.
func assertServes(t testing.TB, in *instance) {
	t.Helper()
	h2test.AssertServes(t, in.addr, in.tls)
}

// attacker is a raw HTTP/2 client connection to an instance.
type attacker struct{ *h2test.Attacker }

// newAttacker dials in (TLS with ALPN h2, or TCP), sends the client
// preface and an empty SETTINGS frame. readBuf > 0 shrinks the socket
// receive buffer (h2test.Dial), so that a client that does not read makes
// the server's writes back up quickly.
func newAttacker(t testing.TB, in *instance, readBuf int) *attacker {
	t.Helper()
	return &attacker{h2test.NewAttacker(t, dial(t, in, readBuf), in.scheme(), in.addr)}
}

// dial opens a raw connection to in: TLS with ALPN h2 (checked), or TCP.
func dial(t testing.TB, in *instance, readBuf int) net.Conn {
	t.Helper()
	return h2test.DialMode(t, in.addr, in.tls, readBuf)
}

// attackBound bounds each attack connection (h2test.AttackBound).
const attackBound = h2test.AttackBound
