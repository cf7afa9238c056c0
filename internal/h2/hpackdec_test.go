package h2

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/riptide-http/riptide/internal/israce"
)

// decodeBoth decodes block with HeaderDecoder and with x/net's decoder
// (both with a 4 KiB table) and returns each one's fields as text.
func decodeBoth(t *testing.T, ours *HeaderDecoder, theirs *hpack.Decoder, block []byte) (string, string, error, error) {
	t.Helper()
	var a, b bytes.Buffer
	errA := ours.Decode(block, func(n, v []byte) { fmt.Fprintf(&a, "%s=%s\n", n, v) })
	fs, errB := theirs.DecodeFull(block)
	for _, f := range fs {
		fmt.Fprintf(&b, "%s=%s\n", f.Name, f.Value)
	}
	return a.String(), b.String(), errA, errB
}

// TestHeaderDecoderMatchesXNet decodes blocks made by x/net's encoder
// (indexed, literal with and without indexing, never-indexed, Huffman and
// raw strings, table size updates and evictions) with both decoders, one
// pair of decoders per run as on a connection, and wants the same fields.
func TestHeaderDecoderMatchesXNet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var out bytes.Buffer
	enc := hpack.NewEncoder(&out)
	ours := NewHeaderDecoder(4096, 1<<16)
	theirs := hpack.NewDecoder(4096, nil)
	names := []string{":status", "content-type", "date", "x-custom", "set-cookie", "content-length", "vary", "x-long"}
	for block := range 2000 {
		out.Reset()
		if block%97 == 0 {
			enc.SetMaxDynamicTableSize(uint32(rng.IntN(4097)))
		}
		for range 1 + rng.IntN(12) {
			name := names[rng.IntN(len(names))]
			value := fmt.Sprint(rng.IntN(50))
			if name == "x-long" {
				value = string(bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(3000)))
			}
			enc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: rng.IntN(5) == 0})
		}
		a, b, errA, errB := decodeBoth(t, ours, theirs, out.Bytes())
		if errA != nil || errB != nil || a != b {
			t.Fatalf("block %d: ours %v\n%s\nx/net %v\n%s", block, errA, a, errB, b)
		}
	}
}

// TestHeaderDecoderStaticTable: every static table index decodes as
// x/net's does.
func TestHeaderDecoderStaticTable(t *testing.T) {
	for i := 1; i <= 61; i++ {
		ours := NewHeaderDecoder(4096, 1<<16)
		a, b, errA, errB := decodeBoth(t, ours, hpack.NewDecoder(4096, nil), []byte{0x80 | byte(i)})
		if errA != nil || errB != nil || a != b {
			t.Errorf("index %d: ours %q %v, x/net %q %v", i, a, errA, b, errB)
		}
	}
}

// TestHeaderDecoderRejects: malformed blocks are COMPRESSION_ERROR, a
// table size update over the advertised size included, and a table never
// holds more than its size.
func TestHeaderDecoderRejects(t *testing.T) {
	for name, block := range map[string][]byte{
		"index 0":              {0x80},
		"index past tables":    {0x80 | 70},
		"size update too big":  {0x3f, 0xe2, 0x1f}, // 4097
		"size update late":     {0x82, 0x20},
		"string past block":    {0x00, 0x05, 'a'},
		"truncated integer":    {0xff},
		"string over max":      append([]byte{0x00, 0x7f, 0x81, 0x01}, make([]byte, 300)...),
		"integer too long":     {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"bad huffman (EOS)":    {0x00, 0x81, 'a', 0x81, 0xff},
		"literal name missing": {0x40},
	} {
		d := NewHeaderDecoder(4096, 256)
		err := d.Decode(block, func(n, v []byte) {})
		if code, _, ok := ErrorCode(err); !ok || code != ErrCodeCompression {
			t.Errorf("%s: %v, want COMPRESSION_ERROR", name, err)
		}
	}
	d := NewHeaderDecoder(4096, 1<<16)
	var out bytes.Buffer
	enc := hpack.NewEncoder(&out)
	for i := range 500 {
		enc.WriteField(hpack.HeaderField{Name: "x-grow", Value: fmt.Sprint(i, "-", bytes.Repeat([]byte("v"), 100))})
		if err := d.Decode(out.Bytes(), func(n, v []byte) {}); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if d.size > 4096 {
			t.Fatalf("table holds %d bytes, over 4096", d.size)
		}
	}
}

// TestHeaderDecoderAllocs: a block that refers to the tables and carries
// literals without indexing (a Content-Length, Huffman coded or not)
// decodes without allocating.
func TestHeaderDecoderAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates; test.sh runs the allocation tests without it")
	}
	var out bytes.Buffer
	enc := hpack.NewEncoder(&out)
	d := NewHeaderDecoder(4096, 1<<16)
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
	d.Decode(out.Bytes(), func(n, v []byte) {})
	out.Reset()
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "1234", Sensitive: true})
	enc.WriteField(hpack.HeaderField{Name: "x-opaque", Value: "some value of a literal field", Sensitive: true})
	block := bytes.Clone(out.Bytes())
	n := 0
	emit := func(name, value []byte) { n++ }
	if allocs := testing.AllocsPerRun(1000, func() {
		if err := d.Decode(block, emit); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("Decode: %v allocs/op, want 0", allocs)
	}
	if n != 4*1001 {
		t.Errorf("emitted %d fields, want %d", n, 4*1001)
	}
}

// FuzzHeaderDecoder: arbitrary blocks never panic, and whatever decodes
// matches x/net's decoder (seeds in testdata/fuzz).
func FuzzHeaderDecoder(f *testing.F) {
	f.Add([]byte{0x82, 0x86, 0x84})
	f.Add([]byte{0x40, 0x03, 'a', 'b', 'c', 0x01, 'x', 0xbe})
	f.Fuzz(func(t *testing.T, block []byte) {
		ours := NewHeaderDecoder(4096, 1<<16)
		theirs := hpack.NewDecoder(4096, nil)
		a, b, errA, errB := decodeBoth(t, ours, theirs, block)
		if errA == nil && errB == nil && a != b {
			t.Fatalf("ours\n%s\nx/net\n%s", a, b)
		}
	})
}
