package h3srv

import (
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
)

// headFields decodes the response HEADERS frame pending on st.
func headFields(t *testing.T, st *Stream) map[string]string {
	t.Helper()
	h, k, err := h3.ParseFrameHeader(st.pending)
	if err != nil || h.Type != h3.FrameHeaders || uint64(len(st.pending)-k) != h.Length {
		t.Fatalf("pending % x: not one HEADERS frame (%v)", st.pending, err)
	}
	fs, _, err := h3.DecodeFieldSection(nil, make([]byte, 0, 4<<10), st.pending[k:], 4<<10)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range fs {
		m[string(f.Name)] = string(f.Value)
	}
	return m
}

// TestDateLine: a Stream keeps the last Date field line it encoded and
// reuses it only for the same value: every head carries the Date it was
// given, whatever the heads before it carried (same value, another, an
// empty one, one too long to keep, the name in another case).
func TestDateLine(t *testing.T) {
	st := &Stream{wbuf: make([]byte, 0, writeBufSize)}
	d1 := "Thu, 26 Nov 2026 17:22:21 GMT"
	d2 := "Thu, 26 Nov 2026 17:22:22 GMT"
	long := strings.Repeat("x", maxDateLine+1)
	for i, c := range []struct{ name, value string }{
		{"date", d1}, {"date", d1}, {"date", d2}, {"Date", d2}, {"date", d1},
		{"date", ""}, {"date", ""}, {"date", long}, {"date", d1}, {"date", long[:20]}, {"DATE", long},
	} {
		st.wroteHead, st.done, st.pending = false, false, nil
		if err := st.WriteHeaders(200, []h1.Header{hdr("content-type", "text/plain"), hdr(c.name, c.value), hdr("x-after", "1")}); err != nil {
			t.Fatal(err)
		}
		m := headFields(t, st)
		if m["date"] != c.value || m["content-type"] != "text/plain" || m["x-after"] != "1" || m[":status"] != "200" {
			t.Errorf("head %d (%s: %q): fields %q", i, c.name, c.value, m)
		}
	}
	if len(st.date.value) > maxDateLine {
		t.Errorf("kept a Date value of %d bytes, want at most %d", len(st.date.value), maxDateLine)
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
