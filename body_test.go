package riptide

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func echo(c *Ctx) {
	b, err := c.ReadBody()
	if err != nil {
		c.SetStatus(400)
		fmt.Fprintf(c, "error: %v", err)
		return
	}
	c.Write(b)
}

// RFC 9112 §6.2 and §7.1: fixed-length and chunked bodies, with trailers.
func TestRequestBodies(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		b, err := c.ReadBody()
		if err != nil {
			t.Errorf("ReadBody: %v", err)
		}
		c.Write(b)
		for _, h := range c.Trailers() {
			fmt.Fprintf(c, "|%s=%s", h.Name, h.Value)
		}
	})
	rc := dial(t, addr)
	for _, tc := range []struct{ name, req, want string }{
		{"RFC 9112 §6.2 Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "hello"},
		{"RFC 9112 §7.1 chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n", "abcde"},
		{"RFC 9112 §7.1.2 chunked trailer", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\nX-Sum: 9\r\n\r\n", "z|X-Sum=9"},
		{"no body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", ""},
	} {
		rc.send(tc.req)
		res, body := rc.resp("POST")
		if res.StatusCode != 200 || body != tc.want {
			t.Errorf("%s: got %d %q, want %q", tc.name, res.StatusCode, body, tc.want)
		}
	}
}

// A body split across many small reads is reassembled (fixed and chunked).
func TestRequestBodyTrickled(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, echo)
	for _, req := range []string{
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
	} {
		rc := dial(t, addr)
		for i := 0; i < len(req); i++ {
			rc.send(req[i : i+1])
		}
		if res, body := rc.resp("POST"); res.StatusCode != 200 || body != "hello world" {
			t.Errorf("got %d %q", res.StatusCode, body)
		}
	}
}

// RFC 9110 §10.1.1: 100 Continue is sent when the handler first reads the
// body, and not at all when it answers without reading.
func TestExpectContinue(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/read" {
			echo(c)
			return
		}
		c.SetStatus(403)
	})
	rc := dial(t, addr)
	rc.send("POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
	line, err := rc.br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("want 100 Continue first, got %q %v", line, err)
	}
	rc.br.ReadString('\n')
	rc.send("data")
	if res, body := rc.resp("POST"); res.StatusCode != 200 || body != "data" || res.Close {
		t.Fatalf("got %d %q close=%v", res.StatusCode, body, res.Close)
	}

	// Not read: the final status comes at once and the connection closes,
	// since the client may or may not send the body now.
	rc.send("POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
	res, _ := rc.resp("POST")
	if res.StatusCode != 403 || !res.Close || !rc.closed() {
		t.Fatalf("got %d close=%v", res.StatusCode, res.Close)
	}

	// RFC 9110 §10.1.1: an unknown expectation gets 417.
	rc = dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n")
	if res, _ := rc.resp("GET"); res.StatusCode != 417 {
		t.Fatalf("got %d, want 417", res.StatusCode)
	}
}

// MaxRequestBodySize: 413 before the handler for a declared length; a
// failing read (and 413 if the handler writes nothing) for a chunked body.
func TestMaxRequestBodySize(t *testing.T) {
	t.Parallel()
	var handlerErr error
	called := 0
	_, addr := startServer(t, &Server{MaxRequestBodySize: 10}, func(c *Ctx) {
		called++
		_, handlerErr = io.ReadAll(c.Body())
	})
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n01234567890")
	if res, _ := rc.resp("POST"); res.StatusCode != 413 || !res.Close || called != 0 {
		t.Fatalf("declared: got %d close=%v called=%d", res.StatusCode, res.Close, called)
	}
	rc = dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n6\r\n678901\r\n0\r\n\r\n")
	res, _ := rc.resp("POST")
	if res.StatusCode != 413 || !res.Close || !errors.Is(handlerErr, ErrBodyTooLarge) {
		t.Fatalf("chunked: got %d close=%v err=%v", res.StatusCode, res.Close, handlerErr)
	}
	rc = dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789")
	if res, _ := rc.resp("POST"); res.StatusCode != 200 || res.Close {
		t.Fatalf("at the limit: got %d close=%v", res.StatusCode, res.Close)
	}
}

// An unread body is drained so that the next request parses; one too large
// to drain closes the connection (announced with Connection: close).
func TestUnreadBody(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) { c.WriteString("ignored") })
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("POST")
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	for i := 0; i < 2; i++ {
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "ignored" || res.Close {
			t.Fatalf("response %d: %d %q close=%v", i, res.StatusCode, body, res.Close)
		}
	}
	rc.send(fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", DefaultMaxDrainBytes+1<<20))
	res, _ := rc.resp("POST")
	if !res.Close || !rc.closed() {
		t.Fatalf("large unread body: close=%v, want the connection closed", res.Close)
	}
}

// A body the client abandons fails the read with io.ErrUnexpectedEOF.
func TestTruncatedBody(t *testing.T) {
	t.Parallel()
	errc := make(chan error, 1)
	_, addr := startServer(t, nil, func(c *Ctx) {
		_, err := io.ReadAll(c.Body())
		errc <- err
	})
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort")
	rc.nc.(interface{ CloseWrite() error }).CloseWrite()
	if err := <-errc; !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
}

// uploadSize is 1 GiB; RIPTIDE_SHORT_UPLOAD or -short makes it 64 MiB (the
// bound checked is the same).
func uploadSize() int64 {
	if testing.Short() || os.Getenv("RIPTIDE_SHORT_UPLOAD") != "" {
		return 64 << 20
	}
	return 1 << 30
}

// A 1 GiB chunked upload is streamed to the handler: the server's heap does
// not grow with it. The client writes from one fixed buffer, so every byte
// allocated in the process during the upload (runtime TotalAlloc, which
// counts allocations, not live memory) is the server's doing; it must stay
// under 4 MiB, and the peak in-use heap under 16 MiB.
func TestChunkedUploadBoundedMemory(t *testing.T) {
	size := uploadSize()
	got := make(chan int64, 1)
	_, addr := startServer(t, nil, func(c *Ctx) {
		var buf [64 << 10]byte
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{c.Body()}, buf[:])
		if err != nil {
			t.Errorf("handler read: %v", err)
		}
		got <- n
		fmt.Fprintf(c, "%d", n)
	})
	rc := dial(t, addr)
	const chunk = 1 << 20
	frame := make([]byte, 0, chunk+32)
	frame = fmt.Appendf(frame, "%x\r\n", chunk)
	frame = append(frame, bytes.Repeat([]byte{'x'}, chunk)...)
	frame = append(frame, "\r\n"...)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapInuse
	rc.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for sent := int64(0); sent < size; sent += chunk {
		if _, err := rc.nc.Write(frame); err != nil {
			t.Fatal(err)
		}
		if sent%(64<<20) == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	rc.send("0\r\n\r\n")
	n := <-got
	runtime.ReadMemStats(&after)
	if n != size {
		t.Fatalf("handler read %d bytes, want %d", n, size)
	}
	res, body := rc.resp("POST")
	if res.StatusCode != 200 || body != fmt.Sprint(size) {
		t.Fatalf("got %d %q", res.StatusCode, body)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB streamed: %d KiB allocated in the process, peak heap in use %d KiB (before: %d KiB)",
		size>>20, alloc>>10, peak>>10, before.HeapInuse>>10)
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes while streaming %d, want < 4 MiB", alloc, size)
	}
	if peak > before.HeapInuse+16<<20 {
		t.Errorf("heap in use grew from %d to %d", before.HeapInuse, peak)
	}
}

func TestHTTPClientPost(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, echo)
	res, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("a", 100000)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if len(b) != 100000 {
		t.Fatalf("echoed %d bytes", len(b))
	}
}

// ReadBodyTimeout fails a body read that stalls.
func TestReadBodyTimeout(t *testing.T) {
	t.Parallel()
	errc := make(chan error, 1)
	_, addr := startServer(t, &Server{ReadBodyTimeout: 100 * time.Millisecond}, func(c *Ctx) {
		_, err := io.ReadAll(c.Body())
		errc <- err
	})
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
	if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if res, _ := rc.resp("POST"); !res.Close || !rc.closed() {
		t.Fatal("connection with a failed body not closed")
	}
}
