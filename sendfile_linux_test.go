package riptide

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procWriteSyscalls returns the process's write-type system call count
// (syscw in /proc/self/io). Linux counts one per write, and one per
// sendfile call however many bytes it moves, so the count tells the copy
// paths apart without strace.
func procWriteSyscalls(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no syscall accounting: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no syscw in /proc/self/io")
	return 0
}

// http.FileServer through the compat door sends a file with sendfile
// (issue 18.1): net/http hands ReadFrom the file inside an
// *io.LimitedReader (io.CopyN), which ReadFrom must not wrap in a second
// one, since Go's sendfile path unwraps only one. The proof is the number
// of write system calls made while serving 16 MiB: the generic copy writes
// 32 KiB at a time (512 calls), sendfile moves up to 4 MiB per call. A
// Range request (an explicit io.LimitedReader section) must also keep its
// limit.
func TestCompatFileServerUsesSendfile(t *testing.T) {
	const size = 16 << 20
	dir := t.TempDir()
	content := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := serveCompat(t, http.FileServer(http.Dir(dir)))
	for _, tc := range []struct {
		rangeHdr   string
		start, end int // the bytes expected
	}{
		{"", 0, size},
		{"Range: bytes=1000-8389607\r\n", 1000, 8389608},
	} {
		rc := dial(t, addr)
		before := procWriteSyscalls(t)
		rc.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n" + tc.rangeHdr + "\r\n")
		res, body := rc.resp("GET")
		writes := procWriteSyscalls(t) - before
		want := content[tc.start:tc.end]
		if res.StatusCode/100 != 2 || body != string(want) {
			t.Fatalf("%q: got %d, %d bytes, want %d bytes from offset %d", tc.rangeHdr, res.StatusCode, len(body), len(want), tc.start)
		}
		t.Logf("%q: %d bytes in %d write system calls", tc.rangeHdr, len(body), writes)
		if limit := int64(len(want) / (256 << 10)); writes > limit {
			t.Errorf("%q: %d write system calls for %d bytes (more than one per 256 KiB: no sendfile)", tc.rangeHdr, writes, len(want))
		}
		// The connection is still in step: the next response follows.
		rc.send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, _ := rc.resp("GET"); res.StatusCode != 404 {
			t.Fatalf("next request: %d", res.StatusCode)
		}
	}
}

// ReadFrom keeps both limits when it unwraps a caller's io.LimitedReader:
// the caller's N (what io.CopyN asked for) and the declared Content-Length.
func TestCompatReadFromNestedLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n, left int64
		err     error
	}
	got := make(chan result, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _ := os.Open(path)
		defer f.Close()
		w.Header().Set("Content-Length", "300000")
		lr := &io.LimitedReader{R: f, N: 200000} // the caller's limit is smaller
		n, err := w.(io.ReaderFrom).ReadFrom(lr)
		lr.N += 500000 // the rest of the declared length, from where it stopped
		m, err2 := w.(io.ReaderFrom).ReadFrom(lr)
		if err == nil {
			err = err2
		}
		got <- result{n + m, lr.N, err}
	}))
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, body := rc.resp("GET")
	r := <-got
	if r.err != nil || r.n != 300000 || r.left != 400000 || len(body) != 300000 || res.ContentLength != 300000 {
		t.Fatalf("ReadFrom: %d bytes, N left %d, %v; body %d bytes (want 300000, N left 400000)", r.n, r.left, r.err, len(body))
	}
}

// ReadFrom of a file through the compat door goes through the exchange
// as Ctx.SendFile does: the head (with the first bytes, which went through
// Write) is held by the kernel with MSG_MORE until the file's bytes join
// it, so a small file's response reaches the client as one TCP segment on
// either engine, as TestSendFileOneSegment shows for the native door (it
// used to flush the head alone first: two segments per response).
func TestCompatReadFromOneSegment(t *testing.T) {
	t.Parallel()
	f, content := sendFileFixture(t, 4096)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "4096")
		io.CopyN(w, f, 4096) // ReadFrom(*io.LimitedReader over f)
	})
	for _, e := range []Engine{EngineGoroutine, EngineEventLoop} {
		t.Run(e.String(), func(t *testing.T) {
			_, addr := startServer(t, &Server{Engine: e, Handler: FromHTTP(h)}, nil)
			ac := newSizedAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 4096)
			if got := ac.buf[ac.size-4096 : ac.size]; !bytes.Equal(got, content) {
				t.Fatalf("body %.40q..., want the file's bytes", got)
			}
			checkOneSegment(t, ac)
		})
	}
}
