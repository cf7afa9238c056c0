package riptide

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// sendChunked sends a chunked POST of size bytes of 'x' in 64 KiB chunks
// written from one buffer (so the client side allocates almost nothing).
// Write errors end it quietly: the server may stop reading at its limit.
func sendChunked(rc *rawConn, size int) {
	w := func(b []byte) bool { _, err := rc.nc.Write(b); return err == nil }
	const chunk = 64 << 10
	frame := fmt.Appendf(nil, "%x\r\n", chunk)
	frame = append(frame, bytes.Repeat([]byte{'x'}, chunk)...)
	frame = append(frame, "\r\n"...)
	if !w([]byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")) {
		return
	}
	for ; size >= chunk; size -= chunk {
		if !w(frame) {
			return
		}
	}
	if size > 0 && !w(fmt.Appendf(nil, "%x\r\n%s\r\n", size, bytes.Repeat([]byte{'x'}, size))) {
		return
	}
	w([]byte("0\r\n\r\n"))
}

// The zero Server bounds Ctx.ReadBody by DefaultMaxReadBodySize (413 and
// close past it, for a declared length before reading anything) while a
// streamed body stays unlimited, as documented on MaxRequestBodySize.
func TestReadBodyDefaultLimit(t *testing.T) {
	t.Parallel()
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	_, addr := startServer(t, nil, func(c *Ctx) {
		if c.QueryArg("stream") != nil {
			n, err := io.Copy(io.Discard, c.Body())
			got <- result{int(n), err}
			return
		}
		b, err := c.ReadBody()
		got <- result{len(b), err}
	})
	over := DefaultMaxReadBodySize + 1

	rc := dial(t, addr)
	go sendChunked(rc, over)
	if r := <-got; !errors.Is(r.err, ErrBodyTooLarge) {
		t.Fatalf("chunked body of %d: ReadBody = %d bytes, %v; want ErrBodyTooLarge", over, r.n, r.err)
	}
	if res, _ := rc.resp("POST"); res.StatusCode != 413 || !res.Close {
		t.Fatalf("chunked body over the limit: got %d close=%v, want 413 and close", res.StatusCode, res.Close)
	}

	rc = dial(t, addr)
	rc.send(fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", over))
	if r := <-got; !errors.Is(r.err, ErrBodyTooLarge) || r.n != 0 {
		t.Fatalf("declared %d: ReadBody = %d bytes, %v; want 0 and ErrBodyTooLarge", over, r.n, r.err)
	}
	if res, _ := rc.resp("POST"); res.StatusCode != 413 || !res.Close {
		t.Fatalf("declared length over the limit: got %d close=%v, want 413 and close", res.StatusCode, res.Close)
	}

	rc = dial(t, addr)
	go func() {
		rc.nc.Write(fmt.Appendf(nil, "POST /?stream=1 HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", over))
		rc.nc.Write(bytes.Repeat([]byte{'x'}, over))
	}()
	if r := <-got; r.err != nil || r.n != over {
		t.Fatalf("streamed body: read %d, %v; want %d bytes (no default limit)", r.n, r.err, over)
	}
	if res, _ := rc.resp("POST"); res.StatusCode != 200 {
		t.Fatalf("streamed body: got %d", res.StatusCode)
	}
}

// Negative MaxRequestBodySize lifts the ReadBody limit too; a positive one
// replaces the default.
func TestReadBodyConfiguredLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max     int64
		size    int
		wantErr bool
	}{
		{max: -1, size: DefaultMaxReadBodySize + 1},
		{max: 1000, size: 1001, wantErr: true},
		{max: 1000, size: 1000},
	} {
		got := make(chan error, 1)
		_, addr := startServer(t, &Server{MaxRequestBodySize: tc.max}, func(c *Ctx) {
			b, err := c.ReadBody()
			if err == nil && len(b) != tc.size {
				err = fmt.Errorf("read %d bytes", len(b))
			}
			got <- err
		})
		rc := dial(t, addr)
		go sendChunked(rc, tc.size)
		err := <-got
		if tc.wantErr != errors.Is(err, ErrBodyTooLarge) || !tc.wantErr && err != nil {
			t.Errorf("MaxRequestBodySize %d, body %d: ReadBody error %v", tc.max, tc.size, err)
		}
	}
}

// ReadBody costs about the body's size in allocations: once for a declared
// length (the buffer is sized from Content-Length), about twice for a
// chunked one. append's growth (1.25× for large slices) cost 4-5×. The
// client writes from a fixed buffer, so TotalAlloc (bytes allocated, not
// live) measured around the call is the server's doing.
func TestReadBodyAllocations(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation sizes are not the program's under -race (test.sh runs this test without it)")
	}
	const size = 6 << 20
	// Built before the server starts measuring.
	declaredHead := fmt.Appendf(nil, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	declaredBody := bytes.Repeat([]byte{'x'}, size)
	for _, tc := range []struct {
		name    string
		send    func(*rawConn)
		maxCost float64
	}{
		{"declared", func(rc *rawConn) {
			rc.nc.Write(declaredHead)
			rc.nc.Write(declaredBody)
		}, 1.25},
		{"chunked", func(rc *rawConn) { sendChunked(rc, size) }, 2.5},
	} {
		type result struct {
			n     int
			err   error
			alloc uint64
		}
		got := make(chan result, 1)
		_, addr := startServer(t, nil, func(c *Ctx) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b, err := c.ReadBody()
			runtime.ReadMemStats(&after)
			got <- result{len(b), err, after.TotalAlloc - before.TotalAlloc}
		})
		rc := dial(t, addr)
		go tc.send(rc)
		r := <-got
		if r.err != nil || r.n != size {
			t.Fatalf("%s: ReadBody = %d bytes, %v", tc.name, r.n, r.err)
		}
		cost := float64(r.alloc) / size
		t.Logf("%s: %d MiB body, %.2f× its size allocated", tc.name, size>>20, cost)
		if cost > tc.maxCost {
			t.Errorf("%s: ReadBody allocated %d bytes for a %d-byte body (%.2f×), want at most %.2f×",
				tc.name, r.alloc, size, cost, tc.maxCost)
		}
	}
}
