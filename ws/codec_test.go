package ws

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The examples of RFC 6455 section 5.7 parse to the headers and payloads the
// RFC gives, and writing those headers gives the same bytes back.
func TestRFC6455Examples(t *testing.T) {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	tests := []struct {
		name    string
		wire    []byte
		h       Header
		payload string
	}{
		{"unmasked text", []byte{0x81, 0x05, 'H', 'e', 'l', 'l', 'o'}, Header{Fin: true, Op: OpText, Length: 5}, "Hello"},
		{"masked text", []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}, Header{Fin: true, Op: OpText, Masked: true, Key: key, Length: 5}, "Hello"},
		{"first fragment", []byte{0x01, 0x03, 'H', 'e', 'l'}, Header{Op: OpText, Length: 3}, "Hel"},
		{"last fragment", []byte{0x80, 0x02, 'l', 'o'}, Header{Fin: true, Op: OpContinuation, Length: 2}, "lo"},
		{"ping", []byte{0x89, 0x05, 'H', 'e', 'l', 'l', 'o'}, Header{Fin: true, Op: OpPing, Length: 5}, "Hello"},
		{"masked pong", []byte{0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}, Header{Fin: true, Op: OpPong, Masked: true, Key: key, Length: 5}, "Hello"},
	}
	for _, tt := range tests {
		h, n, err := ParseHeader(tt.wire)
		if err != nil || h != tt.h {
			t.Errorf("%s: ParseHeader = %+v, %d, %v; want %+v", tt.name, h, n, err, tt.h)
			continue
		}
		p := append([]byte(nil), tt.wire[n:]...)
		if h.Masked {
			Mask(h.Key, 0, p)
		}
		if string(p) != tt.payload {
			t.Errorf("%s: payload %q, want %q", tt.name, p, tt.payload)
		}
		if got := AppendHeader(nil, h); !bytes.Equal(got, tt.wire[:n]) || h.Len() != n {
			t.Errorf("%s: AppendHeader = % x (Len %d), want % x", tt.name, got, h.Len(), tt.wire[:n])
		}
		// Every strict prefix of the header asks for more bytes.
		for i := range n {
			if _, m, err := ParseHeader(tt.wire[:i]); m != 0 || err != nil {
				t.Errorf("%s: ParseHeader of %d bytes = %d, %v; want need-more", tt.name, i, m, err)
			}
		}
	}
	// 256 bytes and 64 KiB of binary: the 16- and 64-bit length forms.
	for _, tt := range []struct {
		n    int64
		wire []byte
	}{
		{256, []byte{0x82, 0x7E, 0x01, 0x00}},
		{65536, []byte{0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		h, n, err := ParseHeader(tt.wire)
		if err != nil || n != len(tt.wire) || h.Length != tt.n || h.Op != OpBinary || !h.Fin {
			t.Errorf("length %d: ParseHeader = %+v, %d, %v", tt.n, h, n, err)
		}
		if got := AppendHeader(nil, h); !bytes.Equal(got, tt.wire) {
			t.Errorf("length %d: AppendHeader = % x, want % x", tt.n, got, tt.wire)
		}
	}
	if _, _, err := ParseHeader([]byte{0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0}); err != errLength {
		t.Errorf("64-bit length with the top bit: err %v, want %v", err, errLength)
	}
}

// Mask agrees with the byte-by-byte definition for every length, start
// position and alignment, including a payload unmasked in pieces.
func TestMask(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 100 {
		for pos := range 4 {
			buf := make([]byte, n+3)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			key := KeyUint32(r.Uint32())
			off := n % 3
			a := append([]byte(nil), buf[off:off+n]...)
			b := append([]byte(nil), a...)
			pa := Mask(key, pos, a)
			pb := maskBytewise(key, pos, b)
			if !bytes.Equal(a, b) || pa != pb {
				t.Fatalf("n=%d pos=%d: Mask differs from the definition", n, pos)
			}
			// In two pieces.
			c := append([]byte(nil), buf[off:off+n]...)
			k := n / 3
			p := Mask(key, pos, c[:k])
			Mask(key, p, c[k:])
			if !bytes.Equal(c, a) {
				t.Fatalf("n=%d pos=%d split %d: differs", n, pos, k)
			}
		}
	}
}

// The UTF-8 check agrees with utf8.Valid on every split of valid and invalid
// text, and fails as soon as a byte cannot be part of valid text.
func TestUTF8Incremental(t *testing.T) {
	texts := []string{
		"", "Hello-µ@ßöäüàá-UTF-8!!", "κόσμε", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5",
		"\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf", "\xee\x80\x80",
		"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64",
		"\xf4\x90\x80\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80",
		"\x80", "\xc2", "\xe1\x80", "\xf0\x90\x80", "a\xffb", "\xef\xbf\xbf", "\xf5",
	}
	for _, s := range texts {
		want := utf8.ValidString(s)
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				var v UTF8
				ok := v.Write([]byte(s[:i])) && v.Write([]byte(s[i:j])) && v.Write([]byte(s[j:])) && v.Done()
				if ok != want {
					t.Errorf("%q split %d,%d: valid %v, want %v", s, i, j, ok, want)
				}
			}
		}
	}
	// Fail fast: F4 90 can never start a valid sequence, so the check fails
	// on those two bytes without waiting for the rest.
	var v UTF8
	if !v.Write([]byte("ab\xf4")) || v.Write([]byte("\x90")) {
		t.Error("F4 90 not rejected at its second byte")
	}
}

// The frame rules: control frames, fragmentation, reserved bits, masking,
// limits, close payloads.
func TestReaderRules(t *testing.T) {
	m := func(fin bool, op Opcode, n int64) *Header {
		return &Header{Fin: fin, Op: op, Masked: true, Length: n}
	}
	var r Reader
	if err := r.Frame(&Header{Fin: true, Op: OpText, Length: 1}); err != errNotMasked {
		t.Errorf("unmasked client frame: %v", err)
	}
	steps := []struct {
		h   *Header
		err error
	}{
		{m(false, OpText, 3), nil},
		{m(true, OpPing, 125), nil}, // control frames may interleave
		{m(true, OpPing, 126), errControlLen},
		{m(false, OpPong, 0), errControlFrag},
		{m(false, OpBinary, 1), errExpectedCnt},
		{m(true, OpContinuation, 2), nil},
		{m(true, OpContinuation, 2), errUnexpectedCnt},
		{m(true, 3, 0), errOpcode},
		{m(true, 0xB, 0), errOpcode},
		{&Header{Fin: true, Op: OpText, Masked: true, RSV: RSV1}, errRSV},
		{&Header{Fin: true, Op: OpText, Masked: true, RSV: RSV2}, errRSV},
	}
	for i, s := range steps {
		if err := r.Frame(s.h); err != s.err {
			t.Errorf("step %d %+v: %v, want %v", i, *s.h, err, s.err)
		}
		if s.err == nil && !s.h.Op.IsControl() {
			r.End()
		}
	}
	d := Reader{Deflate: true, MaxFrame: 10, MaxMessage: 15}
	if err := d.Frame(&Header{Op: OpText, Masked: true, RSV: RSV1, Length: 10}); err != nil {
		t.Errorf("RSV1 with deflate: %v", err)
	}
	if err := d.Frame(&Header{Op: OpContinuation, Masked: true, RSV: RSV1, Length: 1}); err != errRSV1Cont {
		t.Errorf("RSV1 on a continuation: %v", err)
	}
	if err := d.Frame(&Header{Fin: true, Op: OpPing, Masked: true, RSV: RSV1}); err != errRSV {
		t.Errorf("RSV1 on a ping: %v", err)
	}
	if err := d.Frame(&Header{Fin: true, Op: OpBinary, Masked: true, Length: 11}); err != ErrFrameTooBig {
		t.Errorf("frame over MaxFrame: %v", err)
	}
	u := Reader{MaxMessage: 15}
	for i, want := range []error{nil, nil, ErrMessageTooBig} {
		op := OpContinuation
		if i == 0 {
			op = OpBinary
		}
		err := u.Frame(&Header{Op: op, Masked: true, Length: 6})
		if err != want {
			t.Errorf("fragment %d: %v, want %v", i, err, want)
		}
		if err == nil {
			u.Payload(make([]byte, 6))
			u.End()
		}
	}
	c := Reader{Client: true}
	if err := c.Frame(m(true, OpText, 1)); err != errMasked {
		t.Errorf("masked server frame: %v", err)
	}
	// Text across fragments is checked as one text.
	tr := Reader{}
	tr.Frame(m(false, OpText, 1))
	if err := tr.Payload([]byte{0xce}); err != nil {
		t.Error(err)
	}
	tr.End()
	tr.Frame(m(true, OpContinuation, 1))
	if err := tr.Payload([]byte{0xba}); err != nil {
		t.Error(err)
	}
	if done, err := tr.End(); !done || err != nil {
		t.Errorf("end of κ: %v %v", done, err)
	}
	tr.Frame(m(true, OpText, 1))
	tr.Payload([]byte{0xce})
	if _, err := tr.End(); err != ErrInvalidUTF8 {
		t.Errorf("text ending mid-sequence: %v", err)
	}
}

func TestClosePayload(t *testing.T) {
	for _, code := range []int{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535} {
		if _, _, err := ParseClose(AppendClose(nil, code, "")); err == nil && code != CloseNoStatus {
			t.Errorf("close code %d accepted", code)
		}
	}
	for _, code := range []int{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999} {
		got, reason, err := ParseClose(AppendClose(nil, code, "bye"))
		if err != nil || got != code || string(reason) != "bye" {
			t.Errorf("close code %d: %d %q %v", code, got, reason, err)
		}
	}
	if _, _, err := ParseClose([]byte{0x03}); err == nil {
		t.Error("one-byte close payload accepted")
	}
	if _, _, err := ParseClose([]byte{0x03, 0xe8, 0xff}); err == nil || err.(*Error).Code != CloseInvalidPayload {
		t.Errorf("close reason not UTF-8: %v", err)
	}
	if code, _, err := ParseClose(nil); code != CloseNoStatus || err != nil {
		t.Errorf("empty close: %d %v", code, err)
	}
	long := AppendClose(nil, 1000, strings.Repeat("é", 100))
	if len(long) > MaxControlPayload || !utf8.Valid(long[2:]) {
		t.Errorf("long reason cut to %d bytes, valid %v", len(long), utf8.Valid(long[2:]))
	}
}

// RFC 7692 section 7.2.3's examples inflate to "Hello"; with takeover the
// second message refers to the first through the window.
func TestRFC7692Examples(t *testing.T) {
	var f Inflater
	for _, msg := range [][]byte{
		{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00},                                     // 7.2.3.1
		{0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00},             // 7.2.3.3 stored block
		{0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00}, // 7.2.3.4 two blocks
	} {
		out, err := f.Inflate(nil, msg, 0)
		if err != nil || string(out) != "Hello" {
			t.Errorf("inflate % x = %q, %v", msg, out, err)
		}
	}
	tk := Inflater{Takeover: true}
	for i, msg := range [][]byte{{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, {0xf2, 0x00, 0x11, 0x00, 0x00}} {
		out, err := tk.Inflate(nil, msg, 0)
		if err != nil || string(out) != "Hello" {
			t.Errorf("takeover message %d = %q, %v", i, out, err)
		}
	}
	// The second message alone, without the first's window, is not "Hello".
	if out, err := f.Inflate(nil, []byte{0xf2, 0x00, 0x11, 0x00, 0x00}, 0); err == nil && string(out) == "Hello" {
		t.Error("back-reference resolved without a window")
	}
}

// Compress and Inflate round-trip, with and without takeover, and takeover
// makes a repeated message smaller.
func TestDeflateRoundTrip(t *testing.T) {
	msg := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 20))
	for _, takeover := range []bool{false, true} {
		c := Compressor{Takeover: takeover}
		f := Inflater{Takeover: takeover}
		var sizes []int
		for range 3 {
			z, err := c.Compress(nil, msg)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(z))
			out, err := f.Inflate(nil, z, 0)
			if err != nil || !bytes.Equal(out, msg) {
				t.Fatalf("takeover %v: round trip %d bytes, %v", takeover, len(out), err)
			}
		}
		if takeover && sizes[1] >= sizes[0] {
			t.Errorf("takeover: second message %d bytes, first %d", sizes[1], sizes[0])
		}
		if !takeover && sizes[1] != sizes[0] {
			t.Errorf("no takeover: sizes %v differ", sizes)
		}
		c.Release()
	}
}

// A compression bomb: 1 MiB of zeros compresses to about a kilobyte;
// inflating it under a 64 KiB limit stops just past the limit.
func TestInflateLimit(t *testing.T) {
	var c Compressor
	z, err := c.Compress(nil, make([]byte, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var f Inflater
	out, err := f.Inflate(make([]byte, 0, 1024), z, 64<<10)
	if err != ErrMessageTooBig || len(out) > 64<<10+1 {
		t.Errorf("bomb of %d bytes: %v after %d bytes, want ErrMessageTooBig within 64 KiB+1", len(z), err, len(out))
	}
	if _, err := f.Inflate(nil, []byte{0xff, 0xff, 0xff}, 0); !errors.Is(err, errInflate) {
		t.Errorf("corrupt data: %v", err)
	}
}

func TestNegotiateDeflate(t *testing.T) {
	tests := []struct {
		offer []string
		cfg   DeflateConfig
		resp  string
		ok    bool
	}{
		{[]string{"permessage-deflate"}, DeflateConfig{true, true}, "permessage-deflate", true},
		{[]string{"permessage-deflate"}, DeflateConfig{}, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", true},
		{[]string{"permessage-deflate; client_max_window_bits"}, DeflateConfig{true, true}, "permessage-deflate", true},
		{[]string{"permessage-deflate; server_max_window_bits=10"}, DeflateConfig{true, true}, "permessage-deflate; server_max_window_bits=10", true},
		{[]string{"permessage-deflate; server_max_window_bits=7, permessage-deflate"}, DeflateConfig{true, true}, "permessage-deflate", true},
		{[]string{"permessage-deflate; server_max_window_bits=15"}, DeflateConfig{true, true}, "permessage-deflate; server_max_window_bits=15", true},
		{[]string{"permessage-deflate; server_no_context_takeover; client_no_context_takeover"}, DeflateConfig{true, true}, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", true},
		{[]string{"permessage-deflate; foo"}, DeflateConfig{}, "", false},
		{[]string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, DeflateConfig{}, "", false},
		{[]string{"permessage-deflate; client_max_window_bits=7"}, DeflateConfig{}, "", false},
		{[]string{"permessage-deflate; client_max_window_bits=\"10\""}, DeflateConfig{true, true}, "permessage-deflate", true},
		{[]string{"x-webkit-deflate-frame", "permessage-deflate; client_max_window_bits=15"}, DeflateConfig{true, true}, "permessage-deflate", true},
		{nil, DeflateConfig{}, "", false},
	}
	for _, tt := range tests {
		_, resp, ok := NegotiateDeflate(tt.offer, tt.cfg)
		if resp != tt.resp || ok != tt.ok {
			t.Errorf("%q %+v: %q %v, want %q %v", tt.offer, tt.cfg, resp, ok, tt.resp, tt.ok)
		}
	}
	if p, on, err := AcceptDeflateResponse([]string{"permessage-deflate; server_no_context_takeover"}); !on || err != nil || !p.ServerNoContextTakeover {
		t.Errorf("client accepts a plain response: %+v %v %v", p, on, err)
	}
	if p, on, err := AcceptDeflateResponse([]string{"permessage-deflate; client_max_window_bits=10"}); !on || err != nil || !HuffmanOnly(p.ClientMaxWindowBits) {
		t.Errorf("client refuses a window limit it honours with Huffman-only: %+v %v %v", p, on, err)
	}
	for _, bad := range []string{"foo", "permessage-deflate, permessage-deflate", "permessage-deflate; client_max_window_bits"} {
		if _, _, err := AcceptDeflateResponse([]string{bad}); err == nil {
			t.Errorf("client accepted response %q", bad)
		}
	}
}

// Huffman-only output refers to no earlier byte: every message inflates
// without the earlier messages' window even with the compressor kept
// (takeover), where LZ77 output does not; and it is no smaller than LZ77
// on repetitive text (no matches at all), so it honours a peer's
// server_max_window_bits of 8.
func TestHuffmanOnlyNoBackReferences(t *testing.T) {
	msg := []byte(strings.Repeat("abcabcabc ", 200))
	c := Compressor{Takeover: true, HuffmanOnly: true}
	for i := range 3 {
		z, err := c.Compress(nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(z) >= len(msg) {
			t.Errorf("message %d: %d bytes compressed from %d", i, len(z), len(msg))
		}
		var fresh Inflater // no window: a back-reference would fail
		out, err := fresh.Inflate(nil, z, 0)
		if err != nil || !bytes.Equal(out, msg) {
			t.Fatalf("message %d without a window: %d bytes, %v", i, len(out), err)
		}
	}
	// An LZ77 compressor with takeover refers back to the first message.
	lzt := Compressor{Takeover: true}
	lzt.Compress(nil, msg)
	z2, _ := lzt.Compress(nil, msg)
	var fresh Inflater
	if out, err := fresh.Inflate(nil, z2, 0); err == nil && bytes.Equal(out, msg) {
		t.Error("LZ77 takeover message inflated without its window: the check above proves nothing")
	}
	var lz Compressor
	z, _ := lz.Compress(nil, msg)
	zh, _ := (&Compressor{HuffmanOnly: true}).Compress(nil, msg)
	if len(z) >= len(zh) {
		t.Errorf("LZ77 %d bytes, Huffman-only %d: LZ77 found no matches", len(z), len(zh))
	}
}

func BenchmarkMask(b *testing.B) {
	p := make([]byte, 4096)
	key := [4]byte{1, 2, 3, 4}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		Mask(key, 1, p)
	}
}

func BenchmarkMaskBytewise(b *testing.B) {
	p := make([]byte, 4096)
	key := [4]byte{1, 2, 3, 4}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		maskBytewise(key, 1, p)
	}
}
