package riptide_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestTLSKeepAliveIdle serves keep-alive HTTP/1.1 over TLS, where a
// connection waiting for its next request lends its write buffers to a
// pool: responses small and large, request bodies and pipelined requests
// on one connection all come back intact, on both APIs.
func TestTLSKeepAliveIdle(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("0123456789abcdef"), 6<<10) // 96 KiB: past the write buffer
	native := riptide.HandlerFunc(func(c *riptide.Ctx) {
		switch string(c.Path()) {
		case "/big":
			c.Write(big)
		case "/echo":
			b, _ := c.ReadBody()
			c.Write(b)
		default:
			c.WriteString("hello")
		}
	})
	compat := riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(big)
		case "/echo":
			io.Copy(w, r.Body)
		default:
			io.WriteString(w, "hello")
		}
	}))
	for name, h := range map[string]riptide.Handler{"native": native, "compat": compat} {
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int64
			srv := &riptide.Server{Handler: h, TLSConfig: h2TestServerTLS(t), Logger: slog.New(slog.DiscardHandler),
				ConnState: func(_ net.Conn, st riptide.ConnState) {
					if st == riptide.StateNew {
						conns.Add(1)
					}
				}}
			addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true}).Addr
			nc, err := tls.Dial("tcp", addr, h2TestClientTLS(t, "http/1.1"))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(nc)
			body := bytes.Repeat([]byte("x"), 3000)
			echo := "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)
			check := func(method string, want []byte) {
				t.Helper()
				res, err := http.ReadResponse(br, &http.Request{Method: method})
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(res.Body)
				if err != nil || res.StatusCode != 200 || !bytes.Equal(got, want) {
					t.Fatalf("status %d, %d-byte body (%v), want %d bytes", res.StatusCode, len(got), err, len(want))
				}
			}
			for range 5 { // one at a time: the connection idles between them
				io.WriteString(nc, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
				check("GET", []byte("hello"))
				io.WriteString(nc, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
				check("GET", big)
				io.WriteString(nc, echo)
				check("POST", body)
			}
			// Pipelined: no idle wait between them.
			io.WriteString(nc, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n"+echo+"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
			check("GET", big)
			check("POST", body)
			check("GET", []byte("hello"))
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1 kept alive", n)
			}
		})
	}
}
