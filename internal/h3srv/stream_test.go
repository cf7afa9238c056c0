package h3srv

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicx/quicxtest"
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
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
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
		for _, e := range st.lines.e {
			if len(e.name)+len(e.value) > maxCachedLine {
				t.Errorf("head %d: kept a line of %d name and value bytes, want at most %d", i, len(e.name)+len(e.value), maxCachedLine)
			}
		}
	}
}

// TestStatusLine: each head carries the status it was given, 200 (a
// prebuilt line) or another.
func TestStatusLine(t *testing.T) {
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
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
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
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
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
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
	c := &Conn{}
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
			srv, cli := quicxtest.Pair(quicxtest.Options{})
			defer cli.CloseWithError(0, "")
			engine := NewConn(srv, nil, echo)
			s, err := cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			s.Write(c.req)
			s.Close()
			qs, err := srv.AcceptStream(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			st := getStream(engine, qs)
			if st.readHead() {
				io.Copy(io.Discard, st)
			}
			st.finish()
			putStream(st)
			for i, f := range st.fields[:cap(st.fields)] {
				if f.Name != nil || f.Value != nil {
					t.Errorf("pooled Stream's field %d: %q: %q", i, f.Name, f.Value)
				}
			}
		})
	}
}
