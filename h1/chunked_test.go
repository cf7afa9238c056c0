package h1

import (
	"bytes"
	"strings"
	"testing"
)

func TestChunkedDecode(t *testing.T) {
	for _, c := range []struct {
		rule     string
		in       string
		body     string
		trailers []string // "Name: value"
		err      *Error   // nil: must decode completely
	}{
		{rule: "RFC 9112 §7.1: chunks and last-chunk", in: "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", body: "hello world"},
		{rule: "RFC 9112 §7.1: chunk-size is hex, either case", in: "a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n", body: "0123456789abcdefghij"},
		{rule: "RFC 9112 §7.1: leading zeros in chunk-size", in: "0005\r\nhello\r\n000\r\n\r\n", body: "hello"},
		{rule: "RFC 9112 §7.1: empty body", in: "0\r\n\r\n", body: ""},
		{rule: "RFC 9112 §7.1.1: extension without value", in: "5;foo\r\nhello\r\n0\r\n\r\n", body: "hello"},
		{rule: "RFC 9112 §7.1.1: extensions with token and quoted values", in: "5;a=b;c=\"d e;\\\"f\"\r\nhello\r\n0;last\r\n\r\n", body: "hello"},
		{rule: "RFC 9112 §7.1.1: BWS around ';' and '='", in: "5 ; a = b\r\nhello\r\n0\r\n\r\n", body: "hello"},
		{rule: "RFC 9112 §7.1.2: trailer fields", in: "5\r\nhello\r\n0\r\nExpires: never\r\nX-Sum:  abc \r\n\r\n", body: "hello", trailers: []string{"Expires: never", "X-Sum: abc"}},
		{rule: "RFC 9112 §7.1: chunk-size must be hex", in: "g\r\nx\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: empty chunk-size", in: "\r\nx\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: 0x prefix", in: "0x5\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: negative size", in: "-5\r\nhello\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: whitespace after size without extension", in: "5 \r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1.1: extension needs ';'", in: "5 foo\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1.1: empty extension name", in: "5;\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1.1: empty extension value", in: "5;a=\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1.1: unterminated quoted value", in: "5;a=\"b\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1.1: control byte in extension", in: "5;a=\x01\r\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §2.2: bare LF after chunk-size", in: "5\nhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §2.2: bare CR after chunk-size", in: "5\rhello\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: chunk data not followed by CRLF", in: "5\r\nhelloX\r\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §2.2: chunk data followed by bare LF", in: "5\r\nhello\n0\r\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §2.2: last chunk followed by bare LF", in: "0\r\n\n", err: ErrBadChunk},
		{rule: "RFC 9112 §2.2: bare LF in trailer section", in: "0\r\nA: b\n\r\n", err: ErrBadChunk},
		{rule: "RFC 9112 §7.1: chunk-size overflow", in: "8000000000000000\r\n", err: ErrChunkTooLarge},
		{rule: "RFC 9112 §7.1: chunk-size overflow, many digits", in: strings.Repeat("f", 40) + "\r\n", err: ErrChunkTooLarge},
		{rule: "RFC 9112 §7.1.2: trailer field without colon", in: "0\r\nnocolon\r\n\r\n", err: ErrBadTrailer},
		{rule: "RFC 9112 §5.2: obs-fold in trailers", in: "0\r\nA: b\r\n c\r\n\r\n", err: ErrBadTrailer},
		{rule: "RFC 9112 §5.1: space before colon in trailers", in: "0\r\nA : b\r\n\r\n", err: ErrBadTrailer},
	} {
		t.Run(c.rule, func(t *testing.T) {
			res := decodeChunked([]byte(c.in), nil)
			if c.err != nil {
				if res.err != c.err {
					t.Fatalf("err = %v, want %v", res.err, c.err)
				}
				return
			}
			if res.err != nil || res.consumed != len(c.in) {
				t.Fatalf("err=%v consumed %d of %d", res.err, res.consumed, len(c.in))
			}
			if string(res.body) != c.body {
				t.Errorf("body %q, want %q", res.body, c.body)
			}
			var tr []string
			for _, h := range res.trailers {
				tr = append(tr, string(h.Name)+": "+string(h.Value))
			}
			if strings.Join(tr, "|") != strings.Join(c.trailers, "|") {
				t.Errorf("trailers %q, want %q", tr, c.trailers)
			}
			// Every split point gives the same result.
			for i := 1; i < len(c.in); i++ {
				if r := decodeChunked([]byte(c.in), []int{i}); !sameChunkResult(res, r) {
					t.Fatalf("split at %d: body %q err %v", i, r.body, r.err)
				}
			}
			every := make([]int, 0, len(c.in))
			for i := 1; i < len(c.in); i++ {
				every = append(every, i)
			}
			if r := decodeChunked([]byte(c.in), every); !sameChunkResult(res, r) {
				t.Fatalf("byte at a time: body %q err %v", r.body, r.err)
			}
		})
	}
}

// TestChunkedErrorsWhileTrickling checks that malformed framing is refused
// before its line ends, so a peer cannot park bytes in the decoder.
func TestChunkedErrorsWhileTrickling(t *testing.T) {
	for _, in := range []string{"g", "5\rx", "5;\x00"} {
		var d ChunkedDecoder
		if _, _, err := d.Decode([]byte(in)); err != ErrBadChunk {
			t.Errorf("Decode(%q) = %v, want ErrBadChunk", in, err)
		}
	}
}

func TestChunkedLimits(t *testing.T) {
	// Extension bytes beyond MaxLineBytes, complete or not.
	d := ChunkedDecoder{MaxLineBytes: 16}
	if _, _, err := d.Decode([]byte("5;" + strings.Repeat("a", 20) + "\r\n")); err != ErrChunkExtTooLarge {
		t.Errorf("complete long size line: %v", err)
	}
	d = ChunkedDecoder{MaxLineBytes: 16}
	if _, _, err := d.Decode([]byte("5;" + strings.Repeat("a", 20))); err != ErrChunkExtTooLarge {
		t.Errorf("incomplete long size line: %v", err)
	}
	d = ChunkedDecoder{MaxLineBytes: 16}
	if _, _, err := d.Decode([]byte("5;" + strings.Repeat("a", 12) + "\r\nhello\r\n")); err != nil {
		t.Errorf("size line at the limit: %v", err)
	}
	// Default line limit is 4 KiB.
	d = ChunkedDecoder{}
	if _, _, err := d.Decode([]byte("5;" + strings.Repeat("a", 5000))); err != ErrChunkExtTooLarge {
		t.Errorf("default line limit: %v", err)
	}

	// Trailer section over MaxTrailerBytes.
	tr := "0\r\n" + strings.Repeat("X-T: 0123456789\r\n", 10) + "\r\n"
	if r := decodeWith(ChunkedDecoder{MaxTrailerBytes: 64}, tr); r.err != ErrTrailerTooLarge {
		t.Errorf("long trailers: %v", r.err)
	}
	if r := decodeWith(ChunkedDecoder{MaxTrailerBytes: 64}, tr[:len(tr)-2]); r.err != ErrTrailerTooLarge {
		t.Errorf("long incomplete trailers: %v", r.err)
	}
	if r := decodeWith(ChunkedDecoder{MaxTrailerBytes: 1024}, tr); r.err != nil || len(r.trailers) != 10 {
		t.Errorf("trailers under the limit: %v, %d", r.err, len(r.trailers))
	}
	// Trailer field limits come from Limits.
	if r := decodeWith(ChunkedDecoder{Limits: &Limits{MaxHeaders: 3}}, tr); r.err != ErrTooManyHeaders {
		t.Errorf("too many trailer fields: %v", r.err)
	}
	if r := decodeWith(ChunkedDecoder{Limits: &Limits{MaxHeaderLine: 8}}, tr); r.err != ErrHeaderLineLarge {
		t.Errorf("long trailer field: %v", r.err)
	}
}

// decodeWith runs a configured decoder over in in one go.
func decodeWith(d ChunkedDecoder, in string) chunkResult {
	var res chunkResult
	src := []byte(in)
	for !d.Done() {
		n, data, err := d.Decode(src)
		res.body = append(res.body, data...)
		src = src[n:]
		if err != nil {
			res.err = err
			return res
		}
	}
	res.trailers = d.Trailers
	return res
}

func TestChunkedDecoderState(t *testing.T) {
	var d ChunkedDecoder
	src := []byte("a\r\n0123456789\r\n0\r\n\r\nNEXT")
	n, data, err := d.Decode(src[:7])
	if err != nil || n != 7 || string(data) != "0123" || d.Remaining() != 6 {
		t.Fatalf("n=%d data=%q err=%v remaining=%d", n, data, err, d.Remaining())
	}
	src = src[n:]
	for !d.Done() {
		n, _, err = d.Decode(src)
		if err != nil {
			t.Fatal(err)
		}
		src = src[n:]
	}
	if string(src) != "NEXT" || d.Remaining() != 0 {
		t.Fatalf("left %q", src)
	}
	// Done decoder consumes nothing more.
	if n, _, err := d.Decode(src); n != 0 || err != nil {
		t.Fatalf("after Done: n=%d err=%v", n, err)
	}
	d.Reset()
	if d.Done() {
		t.Fatal("Done after Reset")
	}
	if _, _, err := d.Decode(nil); err != ErrNeedMore {
		t.Fatalf("empty input: %v", err)
	}
}

func TestChunkedEncoder(t *testing.T) {
	var enc []byte
	enc = AppendChunk(enc, []byte("hello"))
	enc = AppendChunk(enc, nil) // no-op: an empty chunk would end the body
	enc = AppendChunk(enc, bytes.Repeat([]byte("x"), 300))
	enc = AppendChunkHeader(enc, 3)
	enc = append(enc, "abc\r\n"...)
	enc = AppendLastChunk(enc, []Header{{Name: []byte("X-Sum"), Value: []byte("1")}})
	want := "5\r\nhello\r\n12c\r\n" + strings.Repeat("x", 300) + "\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n"
	if string(enc) != want {
		t.Fatalf("encoded %q", enc)
	}
	res := decodeChunked(enc, nil)
	if res.err != nil || string(res.body) != "hello"+strings.Repeat("x", 300)+"abc" || len(res.trailers) != 1 {
		t.Fatalf("round trip: %v %q", res.err, res.body)
	}
	if got := string(AppendLastChunk(nil, nil)); got != "0\r\n\r\n" {
		t.Errorf("last chunk %q", got)
	}
	// Round trip over sizes that cross hex digit boundaries.
	for _, n := range []int{1, 15, 16, 255, 256, 4095, 4096, 65536} {
		body := bytes.Repeat([]byte{'z'}, n)
		enc := AppendLastChunk(AppendChunk(nil, body), nil)
		if res := decodeChunked(enc, []int{1, 2, 3, n / 2}); res.err != nil || !bytes.Equal(res.body, body) {
			t.Errorf("size %d: %v", n, res.err)
		}
	}
}

// TestAppendLastChunkLines: the server's form of the last chunk, with
// pre-encoded trailer lines, frames exactly as AppendLastChunk does.
func TestAppendLastChunkLines(t *testing.T) {
	hs := []Header{{Name: []byte("X-Sum"), Value: []byte("1")}, {Name: []byte("X-B"), Value: []byte("2")}}
	lines := AppendHeader(AppendHeader(nil, hs[0].Name, hs[0].Value), hs[1].Name, hs[1].Value)
	if got, want := string(AppendLastChunkLines([]byte("x"), lines)), string(AppendLastChunk([]byte("x"), hs)); got != want {
		t.Errorf("AppendLastChunkLines = %q, want %q", got, want)
	}
	if got := string(AppendLastChunkLines(nil, nil)); got != "0\r\n\r\n" {
		t.Errorf("no trailers: %q", got)
	}
}
