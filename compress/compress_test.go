package compress

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/riptide-http/riptide"
)

var protocols = []struct {
	name string
	h2   bool
}{{"HTTP/1.1", false}, {"h2c", true}}

// TestEncodings: for each encoding and protocol, a real loopback request
// whose body, decoded with that library's reader, is the original: a body
// buffered whole (with a declared Content-Length that must not survive)
// and one large enough to be streamed.
func TestEncodings(t *testing.T) {
	small := jsonBody(3 << 10)
	large := jsonBody(300 << 10)
	h := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		body := small
		if c.QueryArg("large") != nil {
			body = large
		}
		c.SetContentType("application/json")
		c.SetContentLength(int64(len(body)))
		c.Write(body[:100]) // in pieces: the filter buffers up to MinSize
		c.Write(body[100:])
	}))
	addr := serve(t, h)
	for _, p := range protocols {
		for _, enc := range []string{"gzip", "zstd", "br"} {
			for _, size := range []string{"small", "large"} {
				t.Run(p.name+"/"+enc+"/"+size, func(t *testing.T) {
					want := small
					url := "http://" + addr + "/"
					if size == "large" {
						want, url = large, url+"?large=1"
					}
					req, _ := http.NewRequest("GET", url, nil)
					req.Header.Set("Accept-Encoding", enc)
					resp, err := client(p.h2).Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					checkProto(t, resp, p.h2)
					if got := resp.Header.Get("Content-Encoding"); got != enc {
						t.Fatalf("Content-Encoding %q, want %q", got, enc)
					}
					if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
						t.Errorf("Vary %q", got)
					}
					raw, err := io.ReadAll(resp.Body)
					if err != nil {
						t.Fatal(err)
					}
					if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(raw)) {
						t.Errorf("Content-Length %s for %d encoded bytes", cl, len(raw))
					}
					if len(raw) >= len(want)/2 {
						t.Errorf("%d bytes compressed to %d", len(want), len(raw))
					}
					got, err := io.ReadAll(decoder(t, enc, bytes.NewReader(raw)))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("decoded %d bytes, differ from the %d sent", len(got), len(want))
					}
				})
			}
		}
	}
}

// TestSSE: server-sent events through the compressor arrive one by one:
// the client reads (and decodes) the first event while the handler is
// still waiting to write the second, which it does only once told the
// first arrived.
func TestSSE(t *testing.T) {
	for _, p := range protocols {
		for _, enc := range []string{"gzip", "zstd", "br"} {
			t.Run(p.name+"/"+enc, func(t *testing.T) {
				got1 := make(chan struct{})
				h := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
					c.SetContentType("text/event-stream")
					c.WriteString("data: one\n\n")
					c.Flush()
					select {
					case <-got1:
					case <-time.After(10 * time.Second): // the test has failed; do not hang
						return
					}
					c.WriteString("data: two\n\n")
					c.Flush()
				}))
				resp := get(t, p.h2, serve(t, h), enc)
				checkProto(t, resp, p.h2)
				if got := resp.Header.Get("Content-Encoding"); got != enc {
					t.Fatalf("Content-Encoding %q, want %q", got, enc)
				}
				br := bufio.NewReader(decoder(t, enc, resp.Body))
				for i, want := range []string{"data: one\n", "\n", "data: two\n", "\n"} {
					line, err := br.ReadString('\n')
					if err != nil {
						t.Fatalf("line %d: %v", i, err)
					}
					if line != want {
						t.Fatalf("line %d: %q, want %q", i, line, want)
					}
					if i == 1 {
						close(got1) // the whole first event arrived
					}
				}
				if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
					t.Fatalf("after the events: %q, %v", rest, err)
				}
			})
		}
	}
}

// TestPassThrough: responses the middleware must leave uncompressed, each
// checked for its body, Content-Encoding and Vary.
func TestPassThrough(t *testing.T) {
	big := strings.Repeat("compressible text ", 200)
	for _, tc := range []struct {
		name   string
		method string
		ae     string
		cfg    Config
		h      func(c *riptide.Ctx)
		wantCE string // the Content-Encoding expected ("" none)
		etag   string // the ETag expected
		body   string // the body expected
	}{
		{name: "below MinSize", ae: "gzip",
			h:    func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString("short") },
			body: "short"},
		{name: "MinSize lowered", ae: "gzip", cfg: Config{MinSize: -1},
			h:      func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString("short") },
			wantCE: "gzip", body: "short"},
		{name: "type not compressible", ae: "gzip",
			h:    func(c *riptide.Ctx) { c.SetContentType("image/png"); c.WriteString(big) },
			body: big},
		{name: "no Content-Type", ae: "gzip",
			h:    func(c *riptide.Ctx) { c.WriteString(big) },
			body: big},
		{name: "custom type list", ae: "gzip", cfg: Config{ContentTypes: []string{"image/*"}},
			h:      func(c *riptide.Ctx) { c.SetContentType("image/png"); c.WriteString(big) },
			wantCE: "gzip", body: big},
		{name: "+json suffix", ae: "gzip",
			h:      func(c *riptide.Ctx) { c.SetContentType("application/problem+json"); c.WriteString(big) },
			wantCE: "gzip", body: big},
		{name: "already encoded", ae: "gzip, br",
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetHeader("Content-Encoding", "br")
				c.WriteString(big)
			},
			wantCE: "br", body: big},
		{name: "no-transform", ae: "gzip",
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetHeader("Cache-Control", "public, no-transform")
				c.WriteString(big)
			},
			body: big},
		{name: "handler replaced Vary", ae: "gzip",
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetHeader("Vary", "Origin") // replaces the middleware's
				c.WriteString(big)
			},
			wantCE: "gzip", body: big},
		{name: "strong ETag made weak", ae: "gzip", etag: `W/"v1"`,
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetHeader("ETag", `"v1"`)
				c.WriteString(big)
			},
			wantCE: "gzip", body: big},
		{name: "weak ETag kept", ae: "gzip", etag: `W/"v1"`,
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetHeader("ETag", `W/"v1"`)
				c.WriteString(big)
			},
			wantCE: "gzip", body: big},
		{name: "ETag of an uncompressed response kept", ae: "gzip", etag: `"v1"`,
			h: func(c *riptide.Ctx) {
				c.SetContentType("image/png")
				c.SetHeader("ETag", `"v1"`)
				c.WriteString(big)
			},
			body: big},
		{name: "206 with Content-Range", ae: "gzip",
			h: func(c *riptide.Ctx) {
				c.SetContentType("text/plain")
				c.SetStatus(206)
				c.SetHeader("Content-Range", "bytes 0-3599/9000")
				c.WriteString(big)
			},
			body: big},
		{name: "204", ae: "gzip",
			h: func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.SetStatus(204) }},
		{name: "304", ae: "gzip",
			h: func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.SetStatus(304) }},
		{name: "HEAD", method: "HEAD", ae: "gzip",
			h: func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString(big) }},
		{name: "no Accept-Encoding", ae: "",
			h:    func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString(big) },
			body: big},
		{name: "only refused codings", ae: "gzip;q=0, br;q=0, zstd;q=0",
			h:    func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString(big) },
			body: big},
		{name: "encoding not offered", ae: "br", cfg: Config{Encodings: []Encoding{Gzip}},
			h:    func(c *riptide.Ctx) { c.SetContentType("text/plain"); c.WriteString(big) },
			body: big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, New(tc.cfg)(riptide.HandlerFunc(tc.h)))
			method := tc.method
			if method == "" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, "http://"+addr+"/", nil)
			if tc.ae != "" {
				req.Header.Set("Accept-Encoding", tc.ae)
			}
			resp, err := client(false).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tc.wantCE {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.wantCE)
			}
			if got := resp.Header.Get("ETag"); got != tc.etag {
				t.Errorf("ETag %q, want %q", got, tc.etag)
			}
			if got := resp.Header.Values("Vary"); countOf(got, "Accept-Encoding") != 1 {
				t.Errorf("Vary %q, want Accept-Encoding once", got)
			}
			body := raw
			if tc.wantCE == "gzip" {
				body, err = io.ReadAll(decoder(t, "gzip", bytes.NewReader(raw)))
				if err != nil {
					t.Fatal(err)
				}
			}
			if string(body) != tc.body {
				t.Fatalf("body %d bytes %.40q, want %d bytes %.40q", len(body), body, len(tc.body), tc.body)
			}
		})
	}
}

// checkProto fails the test if resp did not come over the protocol asked.
func checkProto(t *testing.T, resp *http.Response, h2 bool) {
	t.Helper()
	if want := map[bool]int{false: 1, true: 2}[h2]; resp.ProtoMajor != want {
		t.Fatalf("served over %s", resp.Proto)
	}
}

// TestCompatPassesThrough: a net/http handler behind the middleware
// (through riptide.FromHTTP) writes past the body filter; its body, flushed
// or not, must arrive whole and unencoded.
func TestCompatPassesThrough(t *testing.T) {
	big := strings.Repeat("compressible text ", 200)
	h := New(Config{})(riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, big)
		if r.URL.Query().Has("flush") {
			w.(http.Flusher).Flush()
			io.WriteString(w, big)
		}
	})))
	addr := serve(t, h)
	for _, target := range []string{"/", "/?flush=1"} {
		req, _ := http.NewRequest("GET", "http://"+addr+target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client(false).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := big
		if target != "/" {
			want += big
		}
		if err != nil || string(body) != want || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d bytes (want %d), Content-Encoding %q, %v", target, len(body), len(want), resp.Header.Get("Content-Encoding"), err)
		}
	}
}

// TestLevels: the configured level reaches each encoder — the best level
// gives a smaller body than the fastest on the same JSON, both decoding to
// it — and a level out of range is refused when the middleware is built.
func TestLevels(t *testing.T) {
	body := jsonBody(64 << 10)
	size := func(enc string, cfg Config) int {
		h := New(cfg)(riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.SetContentType("application/json")
			c.Write(body)
		}))
		resp := get(t, false, serve(t, h), enc)
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(decoder(t, enc, bytes.NewReader(raw)))
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s %+v: decoded %d bytes, %v", enc, cfg, len(got), err)
		}
		return len(raw)
	}
	for _, tc := range []struct {
		enc        string
		fast, best Config
	}{
		{"gzip", Config{GzipLevel: 1}, Config{GzipLevel: 9}},
		{"zstd", Config{ZstdLevel: zstd.SpeedFastest}, Config{ZstdLevel: zstd.SpeedBestCompression}},
		{"br", Config{BrotliLevel: 1}, Config{BrotliLevel: 11}},
	} {
		if f, b := size(tc.enc, tc.fast), size(tc.enc, tc.best); b >= f {
			t.Errorf("%s: best level %d bytes, fastest %d", tc.enc, b, f)
		}
	}
	for _, cfg := range []Config{{GzipLevel: 10}, {BrotliLevel: 12}, {BrotliLevel: -3}, {ZstdLevel: 99}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", cfg)
				}
			}()
			New(cfg)
		}()
	}
}

func countOf(vs []string, v string) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

// counter is a BodyFilter set by a middleware outside the compressor: it
// counts the bytes that reach it and its flushes, and passes both on.
type counter struct {
	x          *riptide.Ctx
	n, flushes int
}

func (f *counter) Write(p []byte) (int, error) { f.n += len(p); return f.x.WriteUnfiltered(p) }
func (f *counter) Flush() error                { f.flushes++; return f.x.FlushUnfiltered() }

// TestStackedFilters: the compressor writes and flushes through the body
// filter it found set, not past it, and restores it afterwards.
func TestStackedFilters(t *testing.T) {
	body := jsonBody(3 << 10)
	type result struct{ n, flushes int }
	results := make(chan result, 1)
	inner := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("application/json")
		c.Write(body)
		c.Flush()
	}))
	outer := riptide.HandlerFunc(func(c *riptide.Ctx) {
		f := &counter{x: c}
		c.SetBodyFilter(f)
		inner.ServeCtx(c)
		if c.BodyFilter() != f {
			t.Error("the compressor did not restore the filter it found")
		}
		c.SetBodyFilter(nil)
		results <- result{f.n, f.flushes}
	})
	resp := get(t, false, serve(t, outer), "zstd")
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(decoder(t, "zstd", bytes.NewReader(raw)))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("decoded %d bytes (want %d), %v", len(got), len(body), err)
	}
	if r := <-results; r.n != len(raw) || r.flushes != 1 {
		t.Errorf("outer filter saw %d bytes and %d flushes, want %d and 1", r.n, r.flushes, len(raw))
	}
}

// TestPanic: a handler that panics after writing through the compressor
// gets the server's 500 (or a cut connection), and the next responses are
// whole: no pooled state is left half used.
func TestPanic(t *testing.T) {
	body := jsonBody(3 << 10)
	h := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("application/json")
		c.Write(body)
		if c.QueryArg("panic") != nil {
			panic(riptide.ErrAbortHandler)
		}
	}))
	addr := serve(t, h)
	for i := range 3 {
		req, _ := http.NewRequest("GET", "http://"+addr+"/?panic=1", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		if resp, err := client(false).Do(req); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 500 || resp.Header.Get("Content-Encoding") != "" {
				t.Fatalf("panic %d: %s, Content-Encoding %q, %q", i, resp.Status, resp.Header.Get("Content-Encoding"), raw)
			}
		}
		resp := get(t, false, addr, "gzip")
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(decoder(t, "gzip", bytes.NewReader(raw)))
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("after panic %d: decoded %d bytes (want %d), %v", i, len(got), len(body), err)
		}
	}
}
