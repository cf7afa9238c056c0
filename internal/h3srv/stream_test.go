package h3srv

import (
	"slices"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
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

// TestFieldLineCache: a Stream keeps the last field lines it encoded and
// reuses one only for the same name and value: every head carries exactly
// the fields it was given, whatever the heads before it carried (the same
// fields, a new Date, the same value under another name, more fields than
// the cache holds, empty values, values too long to keep).
func TestFieldLineCache(t *testing.T) {
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
	d1 := "Thu, 26 Nov 2026 17:22:21 GMT"
	d2 := "Thu, 26 Nov 2026 17:22:22 GMT"
	long := strings.Repeat("x", maxCachedLine)
	heads := [][]string{
		{"content-type", "text/plain", "date", d1, "content-length", "13"},
		{"content-type", "text/plain", "date", d1, "content-length", "13"},
		{"content-type", "text/plain", "date", d2, "content-length", "13"},
		{"Date", d2, "x-a", d2, "x-b", "13", "content-length", "14"},
		{"x-a", "1", "x-b", "2", "x-c", "3", "x-d", "4", "x-e", "5", "date", d1},
		{"date", d1, "content-type", "text/plain", "x-a", "1", "x-e", "5"},
		{"date", "", "x-a", "", "x-b", ""},
		{"x-long", long, "x-a", long[:20], "x-long", long},
		{"x-a", "1", "content-type", "text/html", "date", d1},
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
