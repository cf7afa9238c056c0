package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"
	"time"
)

// Benchmarks, each input run by riptide (impl=riptide) and by its net/http
// equivalent (impl=nethttp) so the ratio can be read off one run:
//
//	go test ./h1 -run '^$' -bench . -benchmem -count 5 > bench.txt
//	benchstat -col /impl bench.txt

// benchHeaders are realistic browser-ish fields, in the order requests are
// built from them.
var benchHeaders = []string{
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
	"Accept-Language: en-US,en;q=0.5",
	"Accept-Encoding: gzip, deflate, br, zstd",
	"Connection: keep-alive",
	"Cookie: session=6f1c0a2b9e8d7c6b5a49; theme=dark; lang=en",
	"Upgrade-Insecure-Requests: 1",
	"Sec-Fetch-Dest: document",
	"Sec-Fetch-Mode: navigate",
	"Sec-Fetch-Site: none",
	"Sec-Fetch-User: ?1",
	"Priority: u=0, i",
	"Cache-Control: max-age=0",
	"If-None-Match: \"5d8c72a5edda8d6a:3239\"",
	"If-Modified-Since: Sat, 29 Oct 1994 19:43:31 GMT",
	"Referer: https://example.com/previous/page?x=1",
	"X-Forwarded-For: 203.0.113.195, 70.41.3.18, 150.172.238.178",
	"X-Forwarded-Proto: https",
	"X-Request-Id: 7c4a8d09ca3762af61e59520943dc26494f8941b",
	"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
	"DNT: 1",
	"Origin: https://example.com",
	"Pragma: no-cache",
	"Sec-CH-UA: \"Chromium\";v=\"128\", \"Not;A=Brand\";v=\"24\"",
	"Sec-CH-UA-Mobile: ?0",
	"Sec-CH-UA-Platform: \"Linux\"",
	"X-Real-IP: 203.0.113.195",
	"X-Forwarded-Host: example.com",
	"Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43",
	"Via: 1.1 vegur",
	"X-Correlation-Id: 0e5b1c77-8f1a-4f9b-9c1d-2b3c4d5e6f70",
	"Content-Type: text/plain",
}

// getWith returns a GET request with Host and n more header fields.
func getWith(n int) []byte {
	var b strings.Builder
	b.WriteString("GET /api/v1/items/12345?expand=owner&limit=10 HTTP/1.1\r\nHost: example.com\r\n")
	for i := 0; i < n; i++ {
		b.WriteString(benchHeaders[i%len(benchHeaders)])
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

var (
	benchSimpleGET = []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	benchGET10     = getWith(10)
	benchGET20     = getWith(20)
	benchGET32     = getWith(31) // 31 + Host = 32 fields
	benchPOST      = []byte("POST /api/v1/items HTTP/1.1\r\nHost: example.com\r\nUser-Agent: bench\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n" + strings.Repeat("x", 1024))
)

var parseInputs = []struct {
	name string
	in   []byte
}{
	{"SimpleGET", benchSimpleGET},
	{"GET10Headers", benchGET10},
	{"GET20Headers", benchGET20},
	{"GET32Headers", benchGET32},
	{"POSTBody1KiB", benchPOST},
}

var sinkBytes []byte

func BenchmarkParse(b *testing.B) {
	for _, in := range parseInputs {
		b.Run(in.name+"/impl=riptide", func(b *testing.B) {
			var r Request
			b.SetBytes(int64(len(in.in)))
			b.ReportAllocs()
			for b.Loop() {
				n, err := r.Parse(in.in, nil)
				if err != nil {
					b.Fatal(err)
				}
				// Framing: the body is the next ContentLength bytes.
				sinkBytes = in.in[n : n+int(r.ContentLength)]
			}
		})
		b.Run(in.name+"/impl=nethttp", func(b *testing.B) {
			rd := bytes.NewReader(in.in)
			br := bufio.NewReader(rd)
			b.SetBytes(int64(len(in.in)))
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(in.in)
				br.Reset(rd)
				req, err := http.ReadRequest(br)
				if err != nil {
					b.Fatal(err)
				}
				if req.ContentLength > 0 {
					// Read the body through net/http's framing, as the
					// riptide benchmark slices it.
					if _, err := io.Copy(io.Discard, req.Body); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkParseRatio measures riptide against net/http on a shared, busy
// machine: each iteration parses a batch with riptide, then the same batch
// with net/http, so both see the same load, and it reports the ratio of the
// two as "x" (net/http time / riptide time) beside each side's ns per parse.
func BenchmarkParseRatio(b *testing.B) {
	const batch = 16
	for _, in := range parseInputs {
		b.Run(in.name, func(b *testing.B) {
			var r Request
			rd := bytes.NewReader(in.in)
			br := bufio.NewReader(rd)
			var tr, tn time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				for range batch {
					m, err := r.Parse(in.in, nil)
					if err != nil {
						b.Fatal(err)
					}
					sinkBytes = in.in[m : m+int(r.ContentLength)]
				}
				t1 := time.Now()
				for range batch {
					rd.Reset(in.in)
					br.Reset(rd)
					req, err := http.ReadRequest(br)
					if err != nil {
						b.Fatal(err)
					}
					if req.ContentLength > 0 {
						io.Copy(io.Discard, req.Body)
					}
				}
				t2 := time.Now()
				tr += t1.Sub(t0)
				tn += t2.Sub(t1)
				n += batch
			}
			b.ReportMetric(float64(tn)/float64(tr), "x")
			b.ReportMetric(float64(tr.Nanoseconds())/float64(n), "riptide-ns/parse")
			b.ReportMetric(float64(tn.Nanoseconds())/float64(n), "nethttp-ns/parse")
		})
	}
}

// chunkedBody encodes size bytes in chunks of chunk bytes.
func chunkedBody(size, chunk int) []byte {
	var b []byte
	p := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	for len(p) > 0 {
		k := min(chunk, len(p))
		b = AppendChunk(b, p[:k])
		p = p[k:]
	}
	return AppendLastChunk(b, nil)
}

var chunkedInputs = []struct {
	name string
	in   []byte
	size int
}{
	{"1KiB", chunkedBody(1<<10, 256), 1 << 10},
	{"64KiB", chunkedBody(64<<10, 4<<10), 64 << 10},
}

func BenchmarkChunkedDecode(b *testing.B) {
	for _, in := range chunkedInputs {
		b.Run(in.name+"/impl=riptide", func(b *testing.B) {
			var d ChunkedDecoder
			b.SetBytes(int64(in.size))
			b.ReportAllocs()
			for b.Loop() {
				d.Reset()
				src, total := in.in, 0
				for !d.Done() {
					n, data, err := d.Decode(src)
					if err != nil {
						b.Fatal(err)
					}
					total += len(data)
					src = src[n:]
				}
				if total != in.size {
					b.Fatalf("decoded %d bytes", total)
				}
			}
		})
		b.Run(in.name+"/impl=nethttp", func(b *testing.B) {
			rd := bytes.NewReader(in.in)
			br := bufio.NewReader(rd)
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(in.size))
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(in.in)
				br.Reset(rd)
				cr := httputil.NewChunkedReader(br)
				total := 0
				for {
					n, err := cr.Read(buf)
					total += n
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if total != in.size {
					b.Fatalf("decoded %d bytes", total)
				}
			}
		})
	}
}

// writeCases are responses as a handler would describe them: status, fields
// and body.
var writeCases = []struct {
	name   string
	status int
	fields [][2]string
	body   []byte
}{
	{"200Text", 200, [][2]string{{"Content-Type", "text/plain; charset=utf-8"}}, []byte("Hello, World!")},
	{"200JSON", 200, [][2]string{{"Content-Type", "application/json"}}, []byte(`{"message":"Hello, World!","id":12345,"tags":["a","b"]}`)},
	{"404", 404, [][2]string{{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}}, []byte("404 page not found\n")},
	{"CustomHeaders", 200, [][2]string{
		{"Content-Type", "text/html; charset=utf-8"},
		{"Cache-Control", "no-cache, no-store, must-revalidate"},
		{"X-Request-Id", "7c4a8d09ca3762af61e59520943dc26494f8941b"},
		{"X-Frame-Options", "DENY"},
		{"Strict-Transport-Security", "max-age=63072000; includeSubDomains"},
		{"Set-Cookie", "session=6f1c0a2b9e8d7c6b5a49; Path=/; HttpOnly; Secure"},
		{"Vary", "Accept-Encoding"},
		{"ETag", "\"33a64df551425fcc55e4d42a148795d9f25f89d4\""},
	}, []byte("<html><body>ok</body></html>")},
}

// benchNow is fixed so both sides format the same Date.
var benchNow = time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)

// appendResponse writes a response as riptide's server does: status line
// from the table, fields, the once-a-second cached Date line,
// Content-Length, then the body.
func appendResponse(dst []byte, status int, fields [][2]string, dateLine, body []byte) []byte {
	dst = AppendStatusLine(dst, status)
	for _, f := range fields {
		dst = AppendHeader(dst, f[0], f[1])
	}
	dst = append(dst, dateLine...)
	dst = AppendContentLength(dst, int64(len(body)))
	dst = append(dst, '\r', '\n')
	return append(dst, body...)
}

// BenchmarkWrite compares writing a response. The net/http side builds the
// http.Header and http.Response a net/http handler's response amounts to and
// serialises it with Response.Write into a reused buffer (net/http's server
// writer is not usable on its own; Write is the same header serialisation).
func BenchmarkWrite(b *testing.B) {
	dateLine := AppendDate(nil, benchNow)
	date := benchNow.Format(http.TimeFormat)
	for _, c := range writeCases {
		b.Run(c.name+"/impl=riptide", func(b *testing.B) {
			dst := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				dst = appendResponse(dst[:0], c.status, c.fields, dateLine, c.body)
			}
			sinkBytes = dst
		})
		b.Run(c.name+"/impl=nethttp", func(b *testing.B) {
			var out bytes.Buffer
			out.Grow(4096)
			body := bytes.NewReader(c.body)
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				h := make(http.Header, len(c.fields)+2)
				for _, f := range c.fields {
					h.Set(f[0], f[1])
				}
				h.Set("Date", date)
				body.Reset(c.body)
				resp := http.Response{
					StatusCode: c.status, ProtoMajor: 1, ProtoMinor: 1,
					Header: h, ContentLength: int64(len(c.body)), Body: io.NopCloser(body),
				}
				if err := resp.Write(&out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAllocs pins the allocation counts the issue requires: parsing a simple
// GET and a 20-header GET, and writing a 200 response head, allocate nothing.
func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not pinned")
	}
	var r Request
	for _, c := range []struct {
		name string
		in   []byte
	}{{"simple GET", benchSimpleGET}, {"20-header GET", benchGET20}} {
		if _, err := r.Parse(c.in, nil); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { r.Parse(c.in, nil) }); n != 0 {
			t.Errorf("parse %s: %v allocs/op, want 0", c.name, n)
		}
	}

	dst := make([]byte, 0, 1024)
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() {
		dst = AppendStatusLine(dst[:0], 200)
		dst = AppendHeader(dst, "Content-Type", "text/plain; charset=utf-8")
		dst = AppendHeader(dst, "Server", "riptide")
		dst = AppendDate(dst, now)
		dst = AppendContentLength(dst, 13)
		dst = append(dst, '\r', '\n')
	}); n != 0 {
		t.Errorf("writing a 200 head: %v allocs/op, want 0", n)
	}

	var d ChunkedDecoder
	in := chunkedInputs[0].in
	if n := testing.AllocsPerRun(100, func() {
		d.Reset()
		for src := in; !d.Done(); {
			n, _, _ := d.Decode(src)
			src = src[n:]
		}
	}); n != 0 {
		t.Errorf("chunked decode: %v allocs/op, want 0", n)
	}
}
