package riptide

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// sendFileFixture writes a file of size bytes with a recognisable pattern
// and opens it for the whole test.
func sendFileFixture(t testing.TB, size int) (*os.File, []byte) {
	t.Helper()
	content := make([]byte, size)
	for i := range content {
		content[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[i%36]
	}
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, content
}

// sendFileHandler serves sections of f: /full, /section?off=&n=, /framed
// (a buffered prefix, a section, a suffix: chunked), /short (past the end).
func sendFileHandler(f *os.File, size int64) HandlerFunc {
	return func(c *Ctx) {
		off, _ := strconv.ParseInt(string(c.QueryArg("off")), 10, 64)
		n, _ := strconv.ParseInt(string(c.QueryArg("n")), 10, 64)
		switch string(c.Path()) {
		case "/full":
			c.SetContentType("application/octet-stream")
			c.SendFile(f, 0, size)
		case "/section":
			c.SendFile(f, off, n)
		case "/framed":
			c.WriteString("<")
			c.SendFile(f, off, n)
			c.WriteString(">")
		case "/short":
			c.SendFile(f, size-10, 20)
		}
	}
}

// Ctx.SendFile over plain HTTP/1.1 on the engine under test: the whole
// file, a section at an offset, a section inside a chunked body, HEAD,
// and a file that ends early (the connection closes, the client sees a
// short body). The file's own offset is never moved, so one *os.File
// serves many connections at once.
func TestSendFile(t *testing.T) {
	t.Parallel()
	const size = 3<<20 + 17
	f, content := sendFileFixture(t, size)
	_, addr := startServer(t, nil, sendFileHandler(f, size))
	rc := dial(t, addr)
	rc.send("GET /full HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("GET"); res.StatusCode != 200 || body != string(content) || res.ContentLength != size {
		t.Fatalf("full: %d, %d bytes (Content-Length %d)", res.StatusCode, len(body), res.ContentLength)
	}
	rc.send("GET /section?off=1000&n=70000 HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("GET"); body != string(content[1000:71000]) || res.ContentLength != 70000 {
		t.Fatalf("section: %d bytes", len(body))
	}
	rc.send("GET /framed?off=5&n=100000 HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("GET"); body != "<"+string(content[5:100005])+">" || len(res.TransferEncoding) == 0 {
		t.Fatalf("framed: %d bytes, TE %v", len(body), res.TransferEncoding)
	}
	rc.send("HEAD /section?off=0&n=123 HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("HEAD"); body != "" || res.ContentLength != 123 {
		t.Fatalf("HEAD: %q, Content-Length %d", body, res.ContentLength)
	}
	if pos, _ := f.Seek(0, 1); pos != 0 {
		t.Fatalf("file offset moved to %d", pos)
	}
	rc.send("GET /short HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := readHTTP(rc)
	if err == nil {
		t.Fatalf("short file: got a complete response (%d)", res.StatusCode)
	}
	if !rc.closed() {
		t.Fatal("short file: connection left open")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := dial(t, addr)
			for j := range 5 {
				off, n := int64(i*1000+j*77), int64(200000+i)
				rc.send(fmt.Sprintf("GET /section?off=%d&n=%d HTTP/1.1\r\nHost: x\r\n\r\n", off, n))
				if _, body := rc.resp("GET"); body != string(content[off:off+n]) {
					errs <- fmt.Errorf("conn %d request %d: wrong bytes", i, j)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// SendFile moves the bytes with sendfile(2): serving 16 MiB takes a
// handful of write-type system calls (one per sendfile call of up to
// 4 MiB, plus the head), where a copy through a 32 KiB buffer takes 512.
func TestSendFileUsesSendfile(t *testing.T) {
	const size = 16 << 20
	f, content := sendFileFixture(t, size)
	_, addr := startServer(t, nil, sendFileHandler(f, size))
	rc := dial(t, addr)
	before := procWriteSyscalls(t)
	rc.send("GET /full HTTP/1.1\r\nHost: x\r\n\r\n")
	_, body := rc.resp("GET")
	writes := procWriteSyscalls(t) - before
	if !bytes.Equal([]byte(body), content) {
		t.Fatalf("%d bytes, want %d", len(body), size)
	}
	t.Logf("%d bytes in %d write system calls", len(body), writes)
	if writes > size/(256<<10) {
		t.Errorf("%d write system calls for %d bytes: not sendfile", writes, size)
	}
}

// A 4 KiB file sent with SendFile over a real loopback keep-alive
// connection allocates nothing per request (see TestZeroAllocs for the
// method).
func TestSendFileZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	f, _ := sendFileFixture(t, 4096)
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetContentType("text/plain")
		c.SendFile(f, 0, 4096)
	})
	ac := newSizedAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", 4096)
	allocs := testing.AllocsPerRun(2000, ac.roundTrip)
	t.Logf("%v allocs per request", allocs)
	if allocs != 0 {
		t.Errorf("%v allocs per request, want 0", allocs)
	}
}

// newSizedAllocClient is newAllocClient for a response whose body is
// bodyLen bytes: the first round trip learns the head's length.
func newSizedAllocClient(t testing.TB, addr, req string, bodyLen int) *allocClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	ac := &allocClient{t: t, nc: nc, req: []byte(req), buf: make([]byte, 2*bodyLen+4096)}
	nc.Write(ac.req)
	n, head := 0, -1
	for head < 0 || n < head+bodyLen {
		m, err := nc.Read(ac.buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
		if head < 0 {
			if i := bytes.Index(ac.buf[:n], []byte("\r\n\r\n")); i >= 0 {
				head = i + 4
			}
		}
	}
	ac.size = head + bodyLen
	return ac
}

// The head is sent with MSG_MORE, so a small file's response reaches the
// client as one TCP segment, not a head segment and a body segment: the
// client socket's received-segment count (TCP_INFO) grows by about one per
// response.
func TestSendFileOneSegment(t *testing.T) {
	t.Parallel()
	f, _ := sendFileFixture(t, 4096)
	_, addr := startServer(t, nil, func(c *Ctx) { c.SendFile(f, 0, 4096) })
	ac := newSizedAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 4096)
	checkOneSegment(t, ac)
}

// checkOneSegment makes 100 round trips with ac and fails unless about
// one TCP segment arrived per response: the client socket's
// received-segment count (TCP_INFO) grows by at most 1.5 per response.
func checkOneSegment(t *testing.T, ac *allocClient) {
	t.Helper()
	segsIn := func() uint32 {
		var info *unix.TCPInfo
		rc, _ := ac.nc.(*net.TCPConn).SyscallConn()
		rc.Control(func(fd uintptr) { info, _ = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
		if info == nil {
			t.Skip("no TCP_INFO")
		}
		return info.Segs_in
	}
	const n = 100
	before := segsIn()
	for range n {
		ac.roundTrip()
	}
	segs := segsIn() - before
	t.Logf("%d segments received for %d responses", segs, n)
	if segs > n*3/2 {
		t.Errorf("%d segments for %d responses: the head leaves alone", segs, n)
	}
}
