package h2

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestHpackEncoderAsXNet encodes random sequences of header blocks with
// the connection's encoder and with golang.org/x/net/http2/hpack's, side
// by side (names and values of the static table and others, sensitive
// fields, fields too large to index, the peer's table size limit changing
// between blocks), and wants the same bytes for every block, and x/net's
// decoder, fed every block in turn, to give back the fields.
func TestHpackEncoderAsXNet(t *testing.T) {
	names := []string{":status", ":method", ":path", ":scheme", ":authority", "content-type",
		"date", "accept-encoding", "x-custom", "set-cookie", "server", "content-length", "vary", "x-other"}
	values := []string{"", "200", "201", "404", "GET", "PUT", "/", "/index.html", "/a", "http", "https",
		"text/plain", "gzip, deflate", "Mon, 07 Dec 2026 19:21:52 GMT", strings.Repeat("v", 100),
		strings.Repeat("w", 4070), strings.Repeat("x", 5000)}
	rng := rand.New(rand.NewPCG(36, 16))
	for seq := range 400 {
		var xbuf bytes.Buffer
		xe := hpack.NewEncoder(&xbuf)
		ours := newHpackEncoder()
		var got []hpack.HeaderField
		dec := hpack.NewDecoder(h2HeaderTableSize, func(f hpack.HeaderField) { got = append(got, f) })
		for block := range 30 {
			if rng.IntN(8) == 0 {
				v := min(uint32(rng.IntN(6000)), h2HeaderTableSize)
				xe.SetMaxDynamicTableSizeLimit(v)
				ours.setMaxSizeLimit(v)
			}
			xbuf.Reset()
			var b []byte
			var want []hpack.HeaderField
			for range 1 + rng.IntN(8) {
				f := hpack.HeaderField{Name: names[rng.IntN(len(names))], Value: values[rng.IntN(len(values))], Sensitive: rng.IntN(6) == 0}
				if err := xe.WriteField(f); err != nil {
					t.Fatal(err)
				}
				b = ours.appendField(b, f)
				want = append(want, f)
			}
			if !bytes.Equal(b, xbuf.Bytes()) {
				t.Fatalf("sequence %d, block %d (%s): encoded\n%.80x\nx/net's encoder:\n%.80x", seq, block, fieldsString(want), b, xbuf.Bytes())
			}
			got = got[:0]
			if _, err := dec.Write(b); err != nil {
				t.Fatalf("sequence %d, block %d: x/net's decoder: %v", seq, block, err)
			}
			if err := dec.Close(); err != nil {
				t.Fatalf("sequence %d, block %d: x/net's decoder: %v", seq, block, err)
			}
			if len(got) != len(want) {
				t.Fatalf("sequence %d, block %d: decoded %s, want %s", seq, block, fieldsString(got), fieldsString(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("sequence %d, block %d, field %d: decoded %s, want %s", seq, block, i, fieldsString(got[i:i+1]), fieldsString(want[i:i+1]))
				}
			}
			if ours.size > ours.maxSize || ours.maxSize > ours.limit {
				t.Fatalf("sequence %d, block %d: table of %d bytes, size %d, limit %d", seq, block, ours.size, ours.maxSize, ours.limit)
			}
		}
	}
}

// fieldsString shows fields with their values cut short.
func fieldsString(fs []hpack.HeaderField) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "[%s: %.20q (%d B) sensitive %v]", f.Name, f.Value, len(f.Value), f.Sensitive)
	}
	return b.String()
}

// FuzzHpackEncoder reads fields from the input (per field: a flags byte,
// whose low bits pick a name of a small set or a literal one and whether
// it is sensitive, a value length byte and the value; a flags byte of
// 0xff sets the peer's table size limit from the next two bytes), encodes
// them as blocks of four with the connection's encoder and x/net's, and
// wants the same bytes and x/net's decoder to give the fields back.
// Seeds: testdata/fuzz/FuzzHpackEncoder.
func FuzzHpackEncoder(f *testing.F) {
	names := []string{":status", ":method", ":path", ":authority", "content-type", "date", "accept-encoding", "x-a"}
	f.Fuzz(func(t *testing.T, in []byte) {
		var xbuf bytes.Buffer
		xe := hpack.NewEncoder(&xbuf)
		ours := newHpackEncoder()
		var got []hpack.HeaderField
		dec := hpack.NewDecoder(h2HeaderTableSize, func(f hpack.HeaderField) { got = append(got, f) })
		var b []byte
		var want []hpack.HeaderField
		flush := func() {
			if !bytes.Equal(b, xbuf.Bytes()) {
				t.Fatalf("%s: encoded %x, x/net's encoder %x", fieldsString(want), b, xbuf.Bytes())
			}
			got = got[:0]
			if _, err := dec.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := dec.Close(); err != nil {
				t.Fatal(err)
			}
			if fieldsString(got) != fieldsString(want) {
				t.Fatalf("decoded %s, want %s", fieldsString(got), fieldsString(want))
			}
			b, want = b[:0], want[:0]
			xbuf.Reset()
		}
		for len(in) >= 2 {
			flags, n := in[0], int(in[1])
			in = in[2:]
			if flags == 0xff {
				if len(in) < 1 {
					break
				}
				v := min(uint32(n)<<8|uint32(in[0]), h2HeaderTableSize)
				in = in[1:]
				if len(b) > 0 {
					flush()
				}
				xe.SetMaxDynamicTableSizeLimit(v)
				ours.setMaxSizeLimit(v)
				continue
			}
			n = min(n, len(in))
			fld := hpack.HeaderField{Value: string(in[:n]), Sensitive: flags&0x10 != 0}
			in = in[n:]
			if i := int(flags & 0x0f); i < len(names) {
				fld.Name = names[i]
			} else {
				fld.Name = "x-" + strconv.Itoa(i)
			}
			if err := xe.WriteField(fld); err != nil {
				t.Fatal(err)
			}
			b = ours.appendField(b, fld)
			if want = append(want, fld); len(want) == 4 {
				flush()
			}
		}
		if len(want) > 0 {
			flush()
		}
	})
}

// hpackBenchBlock is a typical response head after :status: fields the
// encoder indexes once and then refers to, and a content-length never
// indexed.
var hpackBenchBlock = []hpack.HeaderField{
	{Name: "content-type", Value: "text/plain; charset=utf-8"},
	{Name: "date", Value: "Mon, 07 Dec 2026 19:21:52 GMT"},
	{Name: "server", Value: "riptide"},
	{Name: "x-request-id", Value: "5f2c", Sensitive: true},
	{Name: "content-length", Value: "13", Sensitive: true},
}

// BenchmarkHpackEncoder encodes hpackBenchBlock with the connection's
// encoder (ours) and with x/net's, as the server did before.
func BenchmarkHpackEncoder(b *testing.B) {
	b.Run("ours", func(b *testing.B) {
		e := newHpackEncoder()
		var dst []byte
		b.ReportAllocs()
		for b.Loop() {
			dst = dst[:0]
			for _, f := range hpackBenchBlock {
				dst = e.appendField(dst, f)
			}
		}
	})
	b.Run("xnet", func(b *testing.B) {
		var w h2ByteWriter
		e := hpack.NewEncoder(writerFunc(func(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }))
		b.ReportAllocs()
		for b.Loop() {
			w.b = w.b[:0]
			for _, f := range hpackBenchBlock {
				_ = e.WriteField(f)
			}
		}
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
