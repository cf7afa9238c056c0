package http3

import (
	"bytes"

	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/riptide-http/riptide/h3"
)

// Differential tests of riptide's QPACK codec (h3) against quic-go's
// qpack: each encodes what the other decodes, and both decode the static
// table the same.

func quicEncode(t testing.TB, fields []qpack.HeaderField) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := qpack.NewEncoder(&b)
	for _, f := range fields {
		if err := enc.WriteField(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if len(fields) == 0 {
		return []byte{0, 0} // quic-go writes the prefix with the first field
	}
	return b.Bytes()
}

func quicDecode(p []byte) ([]qpack.HeaderField, error) {
	dec := qpack.NewDecoder().Decode(p)
	var out []qpack.HeaderField
	for {
		f, err := dec()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}

func h3Decode(p []byte) ([]qpack.HeaderField, error) {
	// Room for every line to be the longest static entry, or a literal.
	fields, _, err := h3.DecodeFieldSection(nil, make([]byte, 0, 2*len(p)+100*len(p)/2), p, 1<<20)
	out := make([]qpack.HeaderField, len(fields))
	for i, f := range fields {
		out[i] = qpack.HeaderField{Name: string(f.Name), Value: string(f.Value)}
	}
	return out, err
}

func h3Encode(fields []qpack.HeaderField, huffman bool) []byte {
	b := h3.AppendFieldSectionPrefix(nil)
	for _, f := range fields {
		b = h3.AppendField(b, f.Name, f.Value, huffman)
	}
	return b
}

func equalFields(a, b []qpack.HeaderField) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// staticIndexed is the field section holding the one indexed static field
// line for index i (RFC 9204 §4.5.2).
func staticIndexed(i int) []byte {
	if i < 63 {
		return []byte{0, 0, 0xc0 | byte(i)}
	}
	return []byte{0, 0, 0xff, byte(i - 63)}
}

// TestStaticTable checks riptide's static table (RFC 9204 Appendix A,
// written from the RFC) entry by entry against quic-go's: the indexed field
// line for each index decodes to the same field in both, index 99 to an
// error in both; and riptide encodes each entry as that same one line.
func TestStaticTable(t *testing.T) {
	for i := range 99 {
		p := staticIndexed(i)
		want, err := quicDecode(p)
		if err != nil || len(want) != 1 {
			t.Fatalf("quic-go, index %d: %v, %v", i, want, err)
		}
		got, err := h3Decode(p)
		if err != nil || !equalFields(got, want) {
			t.Errorf("index %d: h3 decodes %v, %v; quic-go %v", i, got, err, want)
		}
		if enc := h3Encode(want, true); !bytes.Equal(enc, p) {
			t.Errorf("index %d (%s: %s): h3 encodes %x, want %x", i, want[0].Name, want[0].Value, enc, p)
		}
	}
	if _, err := quicDecode(staticIndexed(99)); err == nil {
		t.Error("quic-go accepts static index 99")
	}
	if _, err := h3Decode(staticIndexed(99)); err != h3.ErrBadStaticIndex {
		t.Errorf("h3, static index 99: %v", err)
	}
}

var curated = [][]qpack.HeaderField{
	{},
	{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "example.com"}, {Name: ":path", Value: "/"}},
	{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "www.example.com:8443"},
		{Name: ":path", Value: "/api/v1/items?filter=a%20b&sort=-date"},
		{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"},
		{Name: "accept", Value: "*/*"}, {Name: "accept-encoding", Value: "gzip, deflate, br, zstd"},
		{Name: "content-type", Value: "application/json"}, {Name: "content-length", Value: "123"},
		{Name: "cookie", Value: "a=1"}, {Name: "cookie", Value: "b=2"}, {Name: "priority", Value: "u=1, i"},
		{Name: "x-empty", Value: ""}, {Name: "x-binary", Value: "\x00\x01\xff\xfe\x80"},
	},
	{
		{Name: ":status", Value: "200"}, {Name: "content-type", Value: "text/html; charset=utf-8"},
		{Name: "date", Value: "Thu, 26 Nov 2026 11:00:00 GMT"}, {Name: "server", Value: "riptide"},
		{Name: "alt-svc", Value: `h3=":443"; ma=86400`}, {Name: "set-cookie", Value: "id=a3fWa; Expires=Thu, 31 Oct 2026 07:28:00 GMT; Secure; HttpOnly"},
		{Name: "strict-transport-security", Value: "max-age=31536000; includesubdomains; preload"},
	},
	{{Name: ":status", Value: "425"}, {Name: ":status", Value: "599"}, {Name: "grpc-status", Value: "0"}},
	{{Name: strings.Repeat("x", 300), Value: strings.Repeat("\xff", 5000)}},
	{{Name: "ünïcode-name", Value: "välue ✓"}},
}

// randomFields returns a random header list: static names and values,
// static names with other values, and random names and values.
func randomFields(r *rand.Rand, static []qpack.HeaderField) []qpack.HeaderField {
	str := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			if alphabet == "" {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		return string(b)
	}
	const token = "abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&'*+^`|~"
	fields := make([]qpack.HeaderField, r.IntN(20))
	for i := range fields {
		switch r.IntN(4) {
		case 0:
			fields[i] = static[r.IntN(len(static))]
		case 1:
			fields[i] = qpack.HeaderField{Name: static[r.IntN(len(static))].Name, Value: str(r.IntN(50), "")}
		case 2:
			fields[i] = qpack.HeaderField{Name: str(1+r.IntN(30), token), Value: str(r.IntN(200), token+" ;=,/")}
		default:
			fields[i] = qpack.HeaderField{Name: str(1+r.IntN(30), token), Value: str(r.IntN(100), "")}
		}
	}
	return fields
}

func testLists() [][]qpack.HeaderField {
	lists := append([][]qpack.HeaderField{}, curated...)
	static := make([]qpack.HeaderField, 0, 99)
	for i := range 99 {
		f, _ := quicDecode(staticIndexed(i))
		static = append(static, f...)
	}
	r := rand.New(rand.NewPCG(25, 9204))
	for range 2000 {
		lists = append(lists, randomFields(r, static))
	}
	return lists
}

// TestQuicGoEncodesH3Decodes: every list quic-go encodes (always Huffman
// literals) decodes in h3 to the same fields.
func TestQuicGoEncodesH3Decodes(t *testing.T) {
	for i, fields := range testLists() {
		p := quicEncode(t, fields)
		got, err := h3Decode(p)
		if err != nil || !equalFields(got, fields) {
			t.Fatalf("list %d: h3 decodes %q, %v; want %q (encoded %x)", i, got, err, fields, p)
		}
	}
}

// TestH3EncodesQuicGoDecodes: every list h3 encodes, with and without
// Huffman, decodes in quic-go to the same fields.
func TestH3EncodesQuicGoDecodes(t *testing.T) {
	for i, fields := range testLists() {
		for _, huffman := range []bool{false, true} {
			p := h3Encode(fields, huffman)
			got, err := quicDecode(p)
			if err != nil || !equalFields(got, fields) {
				t.Fatalf("list %d, huffman %v: quic-go decodes %q, %v; want %q (encoded %x)", i, huffman, got, err, fields, p)
			}
			// h3 never encodes larger than quic-go, which always uses Huffman.
			if q := quicEncode(t, fields); huffman && len(p) > len(q) {
				t.Errorf("list %d: h3 encodes %d bytes, quic-go %d", i, len(p), len(q))
			}
		}
	}
}

// TestDecodersAgree: on random and mutated field sections, h3 and quic-go
// accept the same inputs and decode them to the same fields, except where
// h3 is stricter by design (listed).
func TestDecodersAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 25))
	lists := testLists()
	stricter := 0
	for i := range 20000 {
		var p []byte
		if i%8 == 0 { // any prefix
			p = make([]byte, 1+r.IntN(6))
			for j := range p {
				p[j] = byte(r.IntN(256))
			}
		} else if i%2 == 0 {
			p = []byte{0, 0}
			for range r.IntN(12) {
				p = append(p, byte(r.IntN(256)))
			}
		} else {
			p = bytes.Clone(quicEncode(t, lists[r.IntN(len(lists))]))
			for range 1 + r.IntN(3) {
				if len(p) > 2 {
					p[2+r.IntN(len(p)-2)] ^= byte(1 << r.IntN(8))
				}
			}
		}
		want, qerr := quicDecode(p)
		got, herr := h3Decode(p)
		switch {
		case qerr == nil && herr == nil:
			if !equalFields(got, want) {
				t.Fatalf("%x: h3 %q, quic-go %q", p, got, want)
			}
		case qerr != nil && herr != nil:
			if h3.CodeOf(herr) != h3.CodeQPACKDecompressionFailed {
				t.Fatalf("%x: h3 error %v is not QPACK_DECOMPRESSION_FAILED", p, herr)
			}
		case qerr != nil:
			t.Fatalf("%x: h3 accepts %q, quic-go refuses: %v", p, got, qerr)
		default:
			// h3 refuses what quic-go accepts: only where the RFC lets it.
			if !h3Stricter(p, herr) {
				t.Fatalf("%x: quic-go accepts %q, h3 refuses: %v", p, want, herr)
			}
			stricter++
		}
	}
	t.Logf("%d inputs quic-go accepted and h3 refused (a listed stricter rule)", stricter)
}

// h3Stricter lists where h3 refuses what quic-go accepts: a prefix
// integer past 2^62, and a Delta Base of 0 with the sign bit set (RFC 9204
// §4.5.1.2: Base = -1, which quic-go reads as 0).
func h3Stricter(p []byte, err error) bool {
	return err == h3.ErrQPACKInteger || err == h3.ErrDynamicReference && len(p) > 1 && p[1] == 0x80
}
