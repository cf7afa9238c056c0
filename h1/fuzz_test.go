package h1

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// Fuzz targets. Seeds live in testdata/fuzz/<FuzzName>/ (the llhttp vectors,
// the differential corpus and inputs the fuzzers found); f.Add adds a few
// more so a plain `go test` exercises every invariant.
//
// Run one with, e.g.:
//
//	go test ./h1 -run '^$' -fuzz FuzzRequest -fuzztime 10m -parallel 1

// inside reports whether s is empty or lies within buf.
func inside(buf, s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(buf) == 0 {
		return false
	}
	b := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return p >= b && p+uintptr(len(s)) <= b+uintptr(len(buf))
}

// appendRequestHead re-serialises a parsed request head.
func appendRequestHead(dst []byte, r *Request) []byte {
	if r.Minor == 1 {
		dst = AppendRequestLine(dst, r.Method, r.Target)
	} else {
		dst = append(dst, r.Method...)
		dst = append(dst, ' ')
		dst = append(dst, r.Target...)
		dst = append(dst, " HTTP/1.0\r\n"...)
	}
	for _, h := range r.Headers {
		dst = AppendHeader(dst, h.Name, h.Value)
	}
	return append(dst, '\r', '\n')
}

func sameHeaders(a, b []Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Name, b[i].Name) || !bytes.Equal(a[i].Value, b[i].Value) || a[i].Key != b[i].Key {
			return false
		}
	}
	return true
}

func checkRequest(t *testing.T, data []byte) {
	var r Request
	n, err := r.Parse(data, nil)
	if err != nil {
		var e *Error
		if err != ErrNeedMore && !errors.As(err, &e) {
			t.Fatalf("error %v is neither ErrNeedMore nor *Error", err)
		}
		if n != 0 {
			t.Fatalf("n = %d with error %v", n, err)
		}
	} else {
		if n <= 0 || n > len(data) {
			t.Fatalf("consumed %d of %d", n, len(data))
		}
		head := data[:n]
		for _, s := range [][]byte{r.Method, r.Target, r.Path, r.Query, r.Host} {
			if !inside(head, s) {
				t.Fatalf("slice %q outside the head", s)
			}
		}
		for _, h := range r.Headers {
			if !inside(head, h.Name) || !inside(head, h.Value) {
				t.Fatalf("header %q outside the head", h.Name)
			}
		}
		// Round trip: the re-serialised head parses to the same request.
		out := appendRequestHead(nil, &r)
		var r2 Request
		n2, err2 := r2.Parse(out, nil)
		if err2 != nil || n2 != len(out) {
			t.Fatalf("re-serialised head %q: n=%d err=%v", out, n2, err2)
		}
		if !bytes.Equal(r.Method, r2.Method) || !bytes.Equal(r.Target, r2.Target) || r.Minor != r2.Minor ||
			!bytes.Equal(r.Host, r2.Host) || r.ContentLength != r2.ContentLength || r.Chunked != r2.Chunked ||
			r.Close != r2.Close || r.Form != r2.Form || !sameHeaders(r.Headers, r2.Headers) {
			t.Fatalf("round trip changed the request:\n%q\n%q", data[:n], out)
		}
	}
	// Incremental: feeding growing prefixes to one Request ends the same way.
	var ri Request
	step := len(data)/7 + 1
	for k := step; k < len(data); k += step {
		nk, e := ri.Parse(data[:k], nil)
		if e == ErrNeedMore {
			continue
		}
		// The prefix decided: it must decide as the whole input does.
		if (e == nil) != (err == nil) || (e == nil && nk != n) {
			t.Fatalf("prefix of %d bytes: n=%d err=%v; whole input: n=%d err=%v", k, nk, e, n, err)
		}
		ri.Reset()
		break
	}
	n3, err3 := ri.Parse(data, nil)
	if (err == nil) != (err3 == nil) || n3 != n {
		t.Fatalf("incremental parse: n=%d err=%v, in one go n=%d err=%v", n3, err3, n, err)
	}
	if why := compareRequest(data); why != "" {
		t.Fatalf("disagreement with net/http: %s\ninput %q", why, data)
	}
}

func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /p?q HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
		"PUT / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
		"OPTIONS * HTTP/1.0\r\n\r\n",
		"GET http://a/b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkRequest)
}

// appendResponseHead re-serialises a parsed response head.
func appendResponseHead(dst []byte, r *Response) []byte {
	dst = append(dst, "HTTP/1."...)
	dst = append(dst, byte('0'+r.Minor), ' ')
	dst = append(dst, byte('0'+r.Status/100), byte('0'+r.Status/10%10), byte('0'+r.Status%10), ' ')
	dst = append(dst, r.Reason...)
	dst = append(dst, '\r', '\n')
	for _, h := range r.Headers {
		dst = AppendHeader(dst, h.Name, h.Value)
	}
	return append(dst, '\r', '\n')
}

func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\n",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Response
		n, err := r.Parse(data, nil)
		if err != nil {
			var e *Error
			if err != ErrNeedMore && !errors.As(err, &e) {
				t.Fatalf("error %v is neither ErrNeedMore nor *Error", err)
			}
		} else {
			if n <= 0 || n > len(data) {
				t.Fatalf("consumed %d of %d", n, len(data))
			}
			head := data[:n]
			if !inside(head, r.Reason) {
				t.Fatal("reason outside the head")
			}
			for _, h := range r.Headers {
				if !inside(head, h.Name) || !inside(head, h.Value) {
					t.Fatalf("header %q outside the head", h.Name)
				}
			}
			out := appendResponseHead(nil, &r)
			var r2 Response
			n2, err2 := r2.Parse(out, nil)
			if err2 != nil || n2 != len(out) {
				t.Fatalf("re-serialised head %q: n=%d err=%v", out, n2, err2)
			}
			if r.Status != r2.Status || r.Minor != r2.Minor || !bytes.Equal(r.Reason, r2.Reason) ||
				r.ContentLength != r2.ContentLength || r.Chunked != r2.Chunked || r.Close != r2.Close ||
				r.BodyMode(false) != r2.BodyMode(false) || !sameHeaders(r.Headers, r2.Headers) {
				t.Fatalf("round trip changed the response:\n%q\n%q", data[:n], out)
			}
			if m := r.BodyMode(true); m != BodyNone {
				t.Fatalf("BodyMode(head) = %v", m)
			}
		}
		for _, head := range []bool{false, true} {
			if why := compareResponse(data, head); why != "" {
				t.Fatalf("disagreement with net/http (head=%v): %s\ninput %q", head, why, data)
			}
		}
	})
}

// chunkResult is everything a chunked decode produced.
type chunkResult struct {
	body     []byte
	trailers []Header
	consumed int
	err      error // nil: done; ErrNeedMore: input ended early
}

// decodeChunked decodes src, handing the decoder at most the bytes up to
// each cut point in turn (cuts are offsets into src, ascending), as a reader
// filling a buffer would. Returned trailers are copied.
func decodeChunked(src []byte, cuts []int) chunkResult {
	var d ChunkedDecoder
	var res chunkResult
	off := 0 // start of unconsumed input
	for _, avail := range append(cuts, len(src)) {
		for {
			if d.Done() {
				res.consumed = off
				for _, h := range d.Trailers {
					res.trailers = append(res.trailers, Header{bytes.Clone(h.Name), bytes.Clone(h.Value), h.Key})
				}
				return res
			}
			if off > avail {
				break
			}
			in := src[off:avail]
			n, data, err := d.Decode(in)
			if n < 0 || n > len(in) || !inside(in[:n], data) {
				panic("Decode broke its contract")
			}
			off += n
			res.body = append(res.body, data...)
			if err == ErrNeedMore {
				break
			}
			if err != nil {
				res.err, res.consumed = err, off
				return res
			}
			if n == 0 && !d.Done() {
				break
			}
		}
	}
	res.err, res.consumed = ErrNeedMore, off
	return res
}

func sameChunkResult(a, b chunkResult) bool {
	return bytes.Equal(a.body, b.body) && sameHeaders(a.trailers, b.trailers) &&
		(a.err == nil) == (b.err == nil) && (a.err == ErrNeedMore) == (b.err == ErrNeedMore) &&
		(a.err != nil || a.consumed == b.consumed)
}

func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), []byte{3, 7})
	f.Add([]byte("3;ext=\"q\\\"x\"\r\nabc\r\n0\r\nTrailer: x\r\n\r\n"), []byte{1})
	f.Add([]byte("A\r\n0123456789\r\n0\r\n\r\n"), []byte{})
	f.Fuzz(func(t *testing.T, data, splits []byte) {
		whole := decodeChunked(data, nil)
		// Cut points from splits: each byte advances the cut.
		var cuts []int
		at := 0
		for _, s := range splits {
			at += int(s)%17 + 1
			if at >= len(data) {
				break
			}
			cuts = append(cuts, at)
		}
		split := decodeChunked(data, cuts)
		if !sameChunkResult(whole, split) {
			t.Fatalf("split at %v: body %q err %v trailers %d; whole: body %q err %v trailers %d",
				cuts, split.body, split.err, len(split.trailers), whole.body, whole.err, len(whole.trailers))
		}
		every := make([]int, 0, len(data))
		for i := 1; i < len(data); i++ {
			every = append(every, i)
		}
		if bytewise := decodeChunked(data, every); !sameChunkResult(whole, bytewise) {
			t.Fatalf("byte at a time: body %q err %v; whole: body %q err %v", bytewise.body, bytewise.err, whole.body, whole.err)
		}
		if whole.err != nil {
			return
		}
		// Round trip through the encoder.
		var enc []byte
		for p := whole.body; len(p) > 0; {
			k := min(len(p), 7)
			enc = AppendChunk(enc, p[:k])
			p = p[k:]
		}
		enc = AppendLastChunk(enc, whole.trailers)
		again := decodeChunked(enc, nil)
		if again.err != nil || !bytes.Equal(again.body, whole.body) || !sameHeaders(again.trailers, whole.trailers) || again.consumed != len(enc) {
			t.Fatalf("encoder round trip: %q -> %q (err %v)", whole.body, again.body, again.err)
		}
		// net/http's chunked reader must read the same body.
		nb, err := io.ReadAll(httputil.NewChunkedReader(bufio.NewReader(bytes.NewReader(data))))
		if err == nil && !bytes.Equal(nb, whole.body) {
			t.Fatalf("net/http reads body %q, riptide %q", nb, whole.body)
		}
	})
}

// TestWriteFuzzSeeds regenerates the seed corpus in testdata/fuzz from the
// llhttp vectors and the differential corpus. It only runs when
// RIPTIDE_WRITE_SEEDS is set:
//
//	RIPTIDE_WRITE_SEEDS=1 go test ./h1 -run TestWriteFuzzSeeds
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("RIPTIDE_WRITE_SEEDS") == "" {
		t.Skip("set RIPTIDE_WRITE_SEEDS=1 to regenerate testdata/fuzz seeds")
	}
	write := func(target, name string, args ...[]byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			fmt.Fprintf(&b, "[]byte(%q)\n", a)
		}
		sum := sha256.Sum256([]byte(b.String()))
		file := "seed-" + name + "-" + hex.EncodeToString(sum[:4])
		if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return r
			}
			return '_'
		}, s)
	}
	for i, c := range llhttpCases(t) {
		name := fmt.Sprintf("llhttp%03d", i)
		write("FuzzRequest", name, c.input)
		// Bodies of chunked requests seed the chunked decoder.
		var r Request
		if n, err := r.Parse(withHostIfMissing(c.input), nil); err == nil && r.Chunked {
			write("FuzzChunked", name, withHostIfMissing(c.input)[n:], []byte{1, 5, 9})
		}
	}
	for name, in := range ownRequestCorpus {
		if len(in) < 1024 {
			write("FuzzRequest", "own_"+clean(name), []byte(in))
		}
	}
	for name, in := range ownResponseCorpus {
		write("FuzzResponse", "own_"+clean(name), []byte(in))
	}
	for name, in := range chunkedSeeds {
		write("FuzzChunked", "own_"+clean(name), []byte(in), []byte{2, 3})
	}
}

func withHostIfMissing(in []byte) []byte {
	if _, err := new(Request).Parse(in, nil); err == ErrMissingHost {
		return withHost(in)
	}
	return in
}

// chunkedSeeds are chunked bodies for the FuzzChunked seed corpus.
var chunkedSeeds = map[string]string{
	"two chunks":        "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
	"extensions":        "3;a=b;c\r\nabc\r\n0;x=\"y z\"\r\n\r\n",
	"trailers":          "1\r\nx\r\n0\r\nA: b\r\nC: d\r\n\r\n",
	"upper hex":         "A\r\n0123456789\r\n0\r\n\r\n",
	"leading zeros":     "0003\r\nabc\r\n000\r\n\r\n",
	"bare LF size":      "3\nabc\r\n0\r\n\r\n",
	"bare CR size":      "3\rabc\r\n0\r\n\r\n",
	"bad hex":           "g\r\nx\r\n0\r\n\r\n",
	"overflow":          "fffffffffffffffffff\r\n",
	"space after size":  "3 \r\nabc\r\n0\r\n\r\n",
	"missing data CRLF": "3\r\nabcX\r\n0\r\n\r\n",
	"obs-fold trailer":  "0\r\nA: b\r\n c\r\n\r\n",
}
