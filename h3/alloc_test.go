package h3

import (
	"strconv"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// browserRequest is a field section as a browser sends it: static-table
// matches, static name references with Huffman values, literal names.
func browserRequest() []byte {
	p := AppendFieldSectionPrefix(nil)
	for _, f := range [][2]string{
		{":method", "GET"}, {":scheme", "https"}, {":authority", "www.example.com"},
		{":path", "/static/app.js?v=1234567"},
		{"sec-ch-ua", `"Chromium";v="131", "Not_A Brand";v="24"`},
		{"sec-ch-ua-mobile", "?0"}, {"sec-ch-ua-platform", `"Linux"`},
		{"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"},
		{"accept", "*/*"}, {"sec-fetch-site", "same-origin"}, {"sec-fetch-mode", "no-cors"},
		{"sec-fetch-dest", "script"}, {"referer", "https://www.example.com/"},
		{"accept-encoding", "gzip, deflate, br, zstd"}, {"accept-language", "en-US,en;q=0.9"},
		{"cookie", "session=0123456789abcdef; theme=dark"}, {"priority", "u=1"},
	} {
		p = AppendField(p, f[0], f[1], true)
	}
	return p
}

// TestAllocs pins the allocation counts of the codec's hot paths at 0:
// decoding, validating and building a browser's request; encoding a
// response head; reading and writing frames.
func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not pinned")
	}
	p := browserRequest()
	fields := make([]Field, 0, 64)
	buf := make([]byte, 0, 16<<10)
	var head RequestHead
	var req h1.Request
	decode := func() {
		fs, _, err := DecodeFieldSection(fields[:0], buf[:0], p, 16<<10)
		if err != nil {
			t.Fatal(err)
		}
		if err := head.Parse(fs, false); err != nil {
			t.Fatal(err)
		}
		if err := head.Build(&req); err != nil {
			t.Fatal(err)
		}
	}
	decode()
	if len(req.Headers) != 13 || string(req.Path) != "/static/app.js" {
		t.Fatalf("decoded %d headers, path %q", len(req.Headers), req.Path)
	}
	if n := testing.AllocsPerRun(100, decode); n != 0 {
		t.Errorf("decode, validate and build a request: %v allocs/op, want 0", n)
	}

	out := make([]byte, 0, 1024)
	name, value := []byte("X-Request-Id"), []byte("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
	if n := testing.AllocsPerRun(100, func() {
		out = AppendFrameHeader(out[:0], FrameHeaders, 0) // a real writer patches the length
		out = AppendFieldSectionPrefix(out)
		out = AppendStatus(out, 200)
		out = AppendField(out, "Content-Type", "text/plain; charset=utf-8", true)
		var d [20]byte
		out = AppendFieldBytes(out, []byte("content-length"), strconv.AppendInt(d[:0], 13, 10), true)
		out = AppendField(out, "Date", "Thu, 26 Nov 2026 11:00:00 GMT", true)
		out = AppendField(out, "Server", "riptide", true)
		out = AppendFieldBytes(out, name, value, true)
		out = AppendFrameHeader(out, FrameData, 13)
	}); n != 0 {
		t.Errorf("encode a response head: %v allocs/op, want 0", n)
	}

	settings := AppendSettings(nil, &Settings{MaxFieldSectionSize: 16 << 10, HasMaxFieldSectionSize: true, EnableConnectProtocol: true})
	stream := append(AppendFrameHeader(nil, FrameHeaders, uint64(len(p))), p...)
	stream = append(AppendFrameHeader(stream, FrameData, 3), "abc"...)
	if n := testing.AllocsPerRun(100, func() {
		var c ControlStream
		h, k, _ := ParseFrameHeader(settings)
		if _, err := c.Check(h, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(h, settings[k:]); err != nil {
			t.Fatal(err)
		}
		var r RequestStream
		for b := stream; len(b) > 0; {
			h, k, _ := ParseFrameHeader(b)
			if _, err := r.Check(h, nil); err != nil {
				t.Fatal(err)
			}
			b = b[k+int(h.Length):]
		}
		out = AppendSettings(out[:0], &c.Settings)
		out = AppendGoaway(out, 400)
	}); n != 0 {
		t.Errorf("frames: %v allocs/op, want 0", n)
	}
}

func BenchmarkDecodeRequest(b *testing.B) {
	p := browserRequest()
	fields := make([]Field, 0, 64)
	buf := make([]byte, 0, 16<<10)
	var head RequestHead
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		fs, _, _ := DecodeFieldSection(fields[:0], buf[:0], p, 16<<10)
		head.Parse(fs, false)
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	out := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		out = AppendFieldSectionPrefix(out[:0])
		out = AppendStatus(out, 200)
		out = AppendField(out, "Content-Type", "text/plain; charset=utf-8", true)
		out = AppendField(out, "Content-Length", "13", true)
		out = AppendField(out, "Server", "riptide", true)
	}
}
