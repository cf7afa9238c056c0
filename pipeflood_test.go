package riptide_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/h2test"
)

// pipeFloodBytes is how much a pipelining client sends without reading: far
// more than loopback's kernel buffers hold in both directions (a few MiB
// of requests in the client's send and the server's receive buffer, and
// the responses to a few MiB more in the server's send buffer).
const pipeFloodBytes = 64 << 20

// pipeFloodHeapLimit bounds the server's live heap growth while it holds a
// pipelining flood: its buffers are a read and a write buffer (4 and 16 KiB
// by default), so anything near this is responses piling up.
const pipeFloodHeapLimit = 8 << 20

// TestPipeliningFloodBounded plays the HTTP/1.1 pipelining flood: a client
// writes small GET requests back to back as fast as it can and never reads
// a response (its receive buffer shrunk to 4 KiB). A server that kept
// reading would have to hold every response it cannot send. The server
// must stop reading instead (its write to the full socket blocks, so the
// client's writes end up blocked too: the write deadline passes) or close
// the connection; its live heap must stay under pipeFloodHeapLimit while
// the flood is held, and once the client goes every goroutine it caused
// must be gone. Every engine, and TLS; both doors.
func TestPipeliningFloodBounded(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	req := "GET /p HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", 64) + "\r\n\r\n"
	chunk := []byte(strings.Repeat(req, (64<<10)/len(req)))
	const body = "pipelined"
	doors := []struct {
		name string
		h    riptide.Handler
	}{
		{"native", riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString(body) })},
		{"compat", riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, body)
		}))},
	}
	// tls: a TLS listener, which always runs on the goroutine engine.
	modes := []struct {
		name   string
		engine riptide.Engine
		tls    bool
	}{
		{"eventloop", riptide.EngineEventLoop, false},
		{"goroutine", riptide.EngineGoroutine, false},
		{"onloop", riptide.EngineOnLoop, false},
		{"tls", riptide.EngineAuto, true},
	}
	for _, m := range modes {
		for _, d := range doors {
			t.Run(m.name+"/"+d.name, func(t *testing.T) {
				var wrap func(net.Listener) net.Listener
				if m.tls {
					conf := h2TestServerTLS(t)
					conf.NextProtos = []string{"http/1.1"}
					wrap = func(ln net.Listener) net.Listener { return tls.NewListener(ln, conf) }
				}
				ls := startLiveWrapped(t, &riptide.Server{Engine: m.engine, Handler: d.h}, wrap)
				serving(t, ls)
				base := backToBaseline(t, measure(false), "start")
				heap0 := h2test.LiveHeap()
				raw, err := net.Dial("tcp", ls.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				_ = raw.(*net.TCPConn).SetReadBuffer(4096)
				nc := raw
				if m.tls {
					tc := tls.Client(raw, h2TestClientTLS(t, "http/1.1"))
					_ = tc.SetDeadline(time.Now().Add(h2AttackBound))
					if err := tc.Handshake(); err != nil {
						t.Fatal(err)
					}
					nc = tc
				}
				sent := 0
				for sent < pipeFloodBytes {
					// A write blocked this long means the server no
					// longer reads; a slow server taken for one that
					// stopped reading still faces the heap check.
					_ = nc.SetWriteDeadline(time.Now().Add(h2StallWait))
					var n int
					n, err = nc.Write(chunk)
					sent += n
					if err != nil {
						break
					}
				}
				grown := h2test.LiveHeap() - heap0
				var st riptide.Stats
				ls.Server.Stats(&st)
				how := "the server stopped reading (the client's write blocked)"
				if ne := net.Error(nil); err == nil {
					how = "every byte was taken"
				} else if !errors.As(err, &ne) || !ne.Timeout() {
					how = "the server closed the connection: " + err.Error()
				}
				t.Logf("sent %d KiB (%d requests) without reading; %s; server finished %d requests; live heap grew %d KiB",
					sent>>10, sent/len(req), how, st.Requests, grown>>10)
				if err == nil {
					t.Errorf("the server read all %d MiB of pipelined requests from a client that read no response: it never stopped reading",
						pipeFloodBytes>>20)
				}
				if grown > pipeFloodHeapLimit {
					t.Errorf("the server's live heap grew by %d KiB holding the flood (limit %d KiB): responses are piling up",
						grown>>10, pipeFloodHeapLimit>>10)
				}
				resetConn(raw)
				backToBaseline(t, base, "after the pipelining client left")
			})
		}
	}
}
