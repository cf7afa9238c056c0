package h3srv

import (
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicxtest"
)

// headList decodes the response HEADERS frame pending on st: names and
// values in order.
func headList(t *testing.T, st *Stream) []string {
	t.Helper()
	h, k, err := h3.ParseFrameHeader(st.pending)
	if err != nil || h.Type != h3.FrameHeaders || uint64(len(st.pending)-k) != h.Length {
		t.Fatalf("pending % x: not one HEADERS frame (%v)", st.pending, err)
	}
	fs, _, err := h3.DecodeFieldSection(nil, make([]byte, 0, 4<<10), st.pending[k:], 4<<10)
	if err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, f := range fs {
		l = append(l, string(f.Name), string(f.Value))
	}
	return l
}

// TestFieldLineCache: a Stream keeps the last field lines it encoded for
// the fields whose values repeat, and reuses one only for the same name
// and value: every head carries exactly the fields it was given, whatever
// the heads before it carried (the same fields, a new Date, the same value
// under another name or another spelling of the name, more such fields
// than the cache holds, empty values, values too long to keep, fields it
// does not keep).
func TestFieldLineCache(t *testing.T) {
	st := &Stream{}
	d1 := "Thu, 26 Nov 2026 17:22:21 GMT"
	d2 := "Thu, 26 Nov 2026 17:22:22 GMT"
	long := strings.Repeat("x", maxCachedLine)
	heads := [][]string{
		{"content-type", "text/plain", "date", d1, "content-length", "13"},
		{"content-type", "text/plain", "date", d1, "content-length", "13"},
		{"content-type", "text/plain", "date", d2, "content-length", "13"},
		{"Date", d2, "server", d2, "x-a", d2, "vary", "13", "content-length", "14"},
		{"server", "1", "vary", "2", "cache-control", "3", "alt-svc", "4", "content-encoding", "5", "Server", "6", "Vary", "7", "date", d1},
		{"date", d1, "content-type", "text/plain", "server", "1", "Vary", "7"},
		{"date", "", "server", "", "vary", ""},
		{"server", long, "vary", long[:20], "server", long, "x-a", long},
		{"x-a", "1", "content-type", "text/html", "date", d1, "Content-Type", "text/html"},
	}
	for i, h := range heads {
		var fields []h1.Header
		for j := 0; j < len(h); j += 2 {
			fields = append(fields, hdr(h[j], h[j+1]))
		}
		st.wroteHead, st.done, st.pending = false, false, nil
		if err := st.WriteHeaders(200, fields); err != nil {
			t.Fatal(err)
		}
		got := headList(t, st)
		want := []string{":status", "200"}
		for j := 0; j < len(h); j += 2 {
			want = append(want, strings.ToLower(h[j]), h[j+1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("head %d: fields %q, want %q", i, got, want)
		}
		for _, e := range st.wb.lines.e {
			if len(e.name)+len(e.value) > maxCachedLine {
				t.Errorf("head %d: kept a line of %d name and value bytes, want at most %d", i, len(e.name)+len(e.value), maxCachedLine)
			}
		}
	}
}

// TestStatusLine: each head carries the status it was given, 200 (a
// prebuilt line) or another.
func TestStatusLine(t *testing.T) {
	st := &Stream{}
	for _, code := range []int{200, 204, 404, 200, 500, 299, 200} {
		st.wroteHead, st.done, st.pending = false, false, nil
		if err := st.WriteHeaders(code, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := headList(t, st), []string{":status", strconv.Itoa(code)}; !slices.Equal(got, want) {
			t.Errorf("status %d: fields %q, want %q", code, got, want)
		}
	}
}

// BenchmarkWriteHeaders encodes a small response's head: content-type,
// Date (the same value each time, as within a second) and content-length.
func BenchmarkWriteHeaders(b *testing.B) {
	st := &Stream{}
	fields := []h1.Header{hdr("content-type", "text/plain"), hdr("date", "Thu, 26 Nov 2026 17:22:21 GMT"), hdr("content-length", "13")}
	b.ReportAllocs()
	for b.Loop() {
		st.wroteHead, st.pending = false, nil
		st.WriteHeaders(200, fields)
	}
}

// BenchmarkWriteHeadersVarying encodes heads whose ten fields all change
// every time: the field line cache's worst case (every line a miss).
func BenchmarkWriteHeadersVarying(b *testing.B) {
	st := &Stream{}
	var vals [16][10]string
	for i := range vals {
		for j := range vals[i] {
			vals[i][j] = "value-" + strconv.Itoa(i*10+j)
		}
	}
	heads := make([][]h1.Header, len(vals))
	for i := range heads {
		for j, v := range vals[i] {
			heads[i] = append(heads[i], hdr("x-field-"+strconv.Itoa(j), v))
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st.wroteHead, st.pending = false, nil
		st.WriteHeaders(200, heads[i%len(heads)])
		i++
	}
}

// BenchmarkStreamCycle takes a Stream from the pool and returns it, as
// every request stream does.
func BenchmarkStreamCycle(b *testing.B) {
	c := &Conn{Shared: NewShared(nil)}
	b.ReportAllocs()
	for b.Loop() {
		putStream(getStream(c, nil))
	}
}

// TestPooledStreamKeepsNoFields: a Stream returned to the pool holds no
// view of a decoded field, whether the head and trailers decoded, or a
// decoding failed part-way (fields written into the pooled array before
// the error).
func TestPooledStreamKeepsNoFields(t *testing.T) {
	// bad is a HEADERS frame of valid fields, then a dynamic table
	// reference, which the decoder refuses.
	bad := func(fields ...string) []byte {
		sec := h3.AppendFieldSectionPrefix(nil)
		for i := 0; i+1 < len(fields); i += 2 {
			sec = h3.AppendField(sec, fields[i], fields[i+1], false)
		}
		sec = append(sec, 0x80)
		return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
	}
	for _, c := range []struct {
		name string
		req  []byte
	}{
		{"head and trailers", append(append(reqHead("POST", "/", "x-a", "1"), data([]byte("body"))...), headers("x-t", "1", "x-u", "2")...)},
		{"bad head", bad(":method", "GET", ":scheme", "https", ":authority", "example.com", ":path", "/", "x-a", "1")},
		{"bad trailers", append(append(reqHead("POST", "/"), data([]byte("body"))...), bad("x-t", "1", "x-u", "2")...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := sentStream(t, c.req)
			if st.readHead() {
				io.Copy(io.Discard, st)
			}
			st.finish()
			hb := st.hb
			putStream(st)
			if hb == nil {
				t.Fatal("no field buffers were lent")
			}
			for i, f := range hb.fields[:cap(hb.fields)] {
				if f.Name != nil || f.Value != nil {
					t.Errorf("pooled Stream's field %d: %q: %q", i, f.Name, f.Value)
				}
			}
		})
	}
}

// TestBulkWriteData: a large body given to WriteData in one slice leaves
// as one DATA frame in two stream writes (the pending head with the DATA
// frame header, then the caller's slice as it is), not in pieces; quic-go
// then frames it straight from the caller's slice.
func TestBulkWriteData(t *testing.T) {
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	p := start(t, quicxtest.Options{Window: 2 << 20}, nil, HandlerFunc(func(s *Stream) {
		s.WriteHeaders(200, []h1.Header{hdr("content-length", strconv.Itoa(len(body)))})
		if n, err := s.WriteData(body); n != len(body) || err != nil {
			t.Errorf("WriteData = %d, %v", n, err)
		}
	}), false)
	s := p.open(reqHead("GET", "/"), true)
	r := readResponse(t, s)
	if r.status != 200 || !slices.Equal(r.body, body) {
		t.Fatalf("status %d, body %d bytes (want %d, equal: %v)", r.status, len(r.body), len(body), slices.Equal(r.body, body))
	}
	if r.frames != 1 {
		t.Errorf("body sent in %d DATA frames, want 1", r.frames)
	}
	if n := s.PeerWrites(); n != 2 {
		t.Errorf("response written in %d writes, want 2", n)
	}
}

// TestWriteDataSized: a body written in 32 KiB pieces under one declared
// DATA frame size leaves as one DATA frame: the head with the frame
// header in one stream write, then one per piece as it is; more than the open
// frame's rest is refused, and a response ended inside the frame (Close or WriteTrailers)
// is reset, not ended with a FIN.
func TestWriteDataSized(t *testing.T) {
	body := make([]byte, 256<<10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	const piece = 32 << 10
	for _, tc := range []struct {
		name     string
		send     int  // bytes written before the end
		trailers bool // end with trailers instead of Close
	}{
		{"whole", len(body), false},
		{"whole, trailers", len(body), true},
		{"short", len(body) - piece, false},
		{"short, trailers", len(body) - piece, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, quicxtest.Options{Window: 1 << 20}, nil, HandlerFunc(func(s *Stream) {
				s.WriteHeaders(200, []h1.Header{hdr("content-length", strconv.Itoa(len(body)))})
				for off := 0; off < tc.send; off += piece {
					if off == len(body)-piece {
						if n, err := s.WriteDataSized(make([]byte, piece+1), piece+1); n != 0 || err == nil {
							t.Errorf("WriteDataSized past the open frame = %d, %v; want an error", n, err)
						}
					}
					if n, err := s.WriteDataSized(body[off:off+piece], uint64(len(body)-off)); n != piece || err != nil {
						t.Errorf("WriteDataSized at %d = %d, %v", off, n, err)
					}
				}
				if tc.trailers {
					err := s.WriteTrailers([]h1.Header{hdr("x-t", "1")})
					if (err == nil) != (tc.send == len(body)) {
						t.Errorf("WriteTrailers = %v", err)
					}
				}
			}), false)
			s := p.open(reqHead("GET", "/"), true)
			if tc.send < len(body) {
				if _, err := io.ReadAll(s); err == nil {
					t.Fatal("a response ended inside its DATA frame was read to a FIN")
				}
				return
			}
			r := readResponse(t, s)
			if r.err != nil || r.status != 200 || !slices.Equal(r.body, body) {
				t.Fatalf("err %v, status %d, body %d bytes (want %d, equal: %v)", r.err, r.status, len(r.body), len(body), slices.Equal(r.body, body))
			}
			if r.frames != 1 {
				t.Errorf("body sent in %d DATA frames, want 1", r.frames)
			}
			if tc.trailers && r.trailers["x-t"] != "1" {
				t.Errorf("trailers %v", r.trailers)
			}
			want := 1 + len(body)/piece // the head with the frame header, then each piece
			if tc.trailers {
				want++
			}
			if n := s.PeerWrites(); n != want {
				t.Errorf("response written in %d writes, want %d", n, want)
			}
		})
	}
}

// BenchmarkBulkWriteData serves a 1 MiB body over the in-memory QUIC
// pair, written in one WriteData or in 32 KiB ones (as io.Copy from a
// file does), each its own DATA frame or all in one declared-size frame
// (WriteDataSized), and reports the stream writes per MiB.
func BenchmarkBulkWriteData(b *testing.B) {
	body := make([]byte, 1<<20)
	for _, bc := range []struct {
		chunk int
		sized bool
	}{{len(body), false}, {32 << 10, false}, {32 << 10, true}} {
		chunk := bc.chunk
		b.Run("chunk="+strconv.Itoa(chunk)+",sized="+strconv.FormatBool(bc.sized), func(b *testing.B) {
			srv, cli := quicxtest.Pair(quicxtest.Options{Window: 2 << 20})
			engine := NewConn(srv, nil, HandlerFunc(func(s *Stream) {
				s.WriteHeaders(200, []h1.Header{hdr("content-length", strconv.Itoa(len(body)))})
				for p := body; len(p) > 0; p = p[min(chunk, len(p)):] {
					if bc.sized {
						s.WriteDataSized(p[:min(chunk, len(p))], uint64(len(p)))
					} else {
						s.WriteData(p[:min(chunk, len(p))])
					}
				}
			}))
			served := make(chan error, 1)
			go func() { served <- engine.Serve() }()
			defer func() {
				cli.CloseWithError(0, "bench over")
				<-served
			}()
			ctl, err := cli.OpenUni()
			if err != nil {
				b.Fatal(err)
			}
			ctl.Write(append(h3.AppendVarint(nil, 0), h3.AppendSettings(nil, &h3.Settings{})...))
			req := reqHead("GET", "/")
			writes := 0
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				s, err := cli.OpenStreamSync(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				s.Write(req)
				s.Close()
				if n, err := io.Copy(io.Discard, s); err != nil || n < int64(len(body)) {
					b.Fatalf("read %d bytes, %v", n, err)
				}
				writes += s.PeerWrites()
			}
			b.ReportMetric(float64(writes)/float64(b.N), "writes/MiB")
		})
	}
}

// TestWriteTimeout: Config.WriteTimeout bounds a response write that
// waits for a client's flow control; the write fails and the stream is
// reset with H3_INTERNAL_ERROR, and the next write fails at once. A
// deadline the handler sets replaces it (here a short one under an hour's
// WriteTimeout).
func TestWriteTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		user    bool
	}{
		{"WriteTimeout", 50 * time.Millisecond, false},
		{"the handler's deadline", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make(chan [2]error, 1)
			p := start(t, quicxtest.Options{Window: 4 << 10}, &Config{WriteTimeout: tc.timeout}, HandlerFunc(func(s *Stream) {
				if tc.user {
					s.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
				}
				s.WriteHeaders(200, nil)
				_, err := s.WriteData(make([]byte, 64<<10))
				_, again := s.WriteData([]byte("x"))
				errs <- [2]error{err, again}
			}), false)
			st := p.open(reqHead("GET", "/"), true) // never read
			select {
			case e := <-errs:
				if !errors.Is(e[0], os.ErrDeadlineExceeded) || e[1] == nil {
					t.Errorf("stalled write: %v, then %v; want the deadline's error, then an error", e[0], e[1])
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the stalled write did not end")
			}
			if code := waitReset(t, st); code != uint64(h3.CodeInternalError) {
				t.Errorf("stream reset with %#x, want H3_INTERNAL_ERROR", code)
			}
		})
	}
}

// TestStreamLendsBuffers: a Stream holds a buffer only while it holds
// something: none once a GET's head is read and released and its
// response head flushed (what a waiting handler then holds), the read
// buffer again only while body bytes read ahead are unconsumed; and the
// body is still checked against the content-length, and trailers
// decoded, after ReleaseHead.
func TestStreamLendsBuffers(t *testing.T) {
	// held reports the buffers st holds.
	held := func(st *Stream) string {
		var s []string
		if st.rd.b != nil {
			s = append(s, "read")
		}
		if st.hb != nil {
			s = append(s, "fields")
		}
		if st.req != nil {
			s = append(s, "request")
		}
		if st.wb != nil {
			s = append(s, "write")
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		name    string
		req     []byte
		body    string
		bodyErr error
		trailer string
	}{
		{"GET", reqHead("GET", "/"), "", nil, ""},
		{"POST", append(reqHead("POST", "/", "content-length", "4"), data([]byte("body"))...), "body", nil, ""},
		{"POST short", append(reqHead("POST", "/", "content-length", "10"), data([]byte("body"))...), "body", h3.ErrBodyLength, ""},
		{"POST trailers", append(append(reqHead("POST", "/"), data([]byte("body"))...), headers("x-t", "1")...), "body", nil, "x-t: 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := sentStream(t, c.req)
			defer putStream(st)
			if !st.readHead() {
				t.Fatal("head refused")
			}
			if string(st.Request().Method) != c.name[:strings.IndexByte(c.name+" ", ' ')] {
				t.Fatalf("method %q", st.Request().Method)
			}
			st.ReleaseHead()
			if c.name == "GET" {
				if h := held(st); h != "" {
					t.Errorf("after the head: holds %s, want nothing", h)
				}
			}
			body, err := io.ReadAll(st)
			if string(body) != c.body || !errors.Is(err, c.bodyErr) {
				t.Errorf("body %q, %v; want %q, %v", body, err, c.body, c.bodyErr)
			}
			var tr []string
			for _, f := range st.Trailers() {
				tr = append(tr, string(f.Name)+": "+string(f.Value))
			}
			if strings.Join(tr, ", ") != c.trailer {
				t.Errorf("trailers %q, want %q", tr, c.trailer)
			}
			if c.bodyErr != nil {
				return
			}
			if err := st.WriteHeaders(200, nil); err != nil {
				t.Fatal(err)
			}
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
			want := ""
			if c.trailer != "" {
				want = "fields" // the trailers', until the stream ends
			}
			if h := held(st); h != want {
				t.Errorf("after the response head: holds %q, want %q", h, want)
			}
		})
	}
}

// sentStream sends req on a new request stream of a fresh in-memory
// connection pair, closes the stream's sending side and returns the
// server's Stream for it (echo is the connection's handler).
func sentStream(t *testing.T, req []byte) *Stream {
	t.Helper()
	srv, cli := quicxtest.Pair(quicxtest.Options{})
	t.Cleanup(func() { cli.CloseWithError(0, "") })
	engine := NewConn(srv, nil, echo)
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write(req)
	s.Close()
	qs, err := srv.AcceptStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return getStream(engine, qs)
}
