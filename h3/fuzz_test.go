package h3

import (
	"bytes"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// asciiLower lowers ASCII letters only, as the encoder does.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = fold(c, true)
	}
	return out
}

// FuzzFrames reads data as a control stream and as a request stream, frame
// by frame: no input may panic, a frame header parses the same from any
// longer prefix and is ErrNeedMore from any shorter, and it re-encodes to a
// header of the same values.
func FuzzFrames(f *testing.F) {
	s := AppendSettings(nil, &Settings{MaxFieldSectionSize: 100, HasMaxFieldSectionSize: true})
	f.Add(append(s, AppendGoaway(nil, 4)...))
	f.Add(append(AppendFrameHeader(nil, FrameHeaders, 3), 0, 0, 0xd1))
	f.Add([]byte{0x21, 0x02, 0xaa, 0xbb, 0x04, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var c ControlStream
		var r RequestStream
		ctlDead, reqDead := false, false
		for b := data; len(b) > 0 && !(ctlDead && reqDead); {
			h, n, err := ParseFrameHeader(b)
			if err == ErrNeedMore {
				for i := range len(b) {
					if _, _, err := ParseFrameHeader(b[:i]); err != ErrNeedMore {
						t.Fatalf("prefix %d of an incomplete header: %v", i, err)
					}
				}
				return
			}
			if err != nil || n > len(b) {
				t.Fatalf("ParseFrameHeader: %d, %v", n, err)
			}
			if h2, n2, err := ParseFrameHeader(b[:n]); err != nil || h2 != h || n2 != n {
				t.Fatalf("header from its own bytes: %+v %d %v, want %+v %d", h2, n2, err, h, n)
			}
			if re, _, err := ParseFrameHeader(AppendFrameHeader(nil, h.Type, h.Length)); err != nil || re != h {
				t.Fatalf("re-encoded header %+v, %v; want %+v", re, err, h)
			}
			b = b[n:]
			if h.Length > uint64(len(b)) {
				return
			}
			p := b[:h.Length]
			b = b[h.Length:]
			if !ctlDead {
				skip, err := c.Check(h, nil)
				if err == nil && !skip {
					err = c.Apply(h, p)
				}
				ctlDead = err != nil
				if _, ok := err.(*Error); err != nil && !ok {
					t.Fatalf("control stream: unnamed error %v", err)
				}
			}
			if !reqDead {
				part, err := r.Check(h, nil)
				reqDead = err != nil
				if err == nil && (part == PartHeaders || part == PartTrailers) {
					var fields [16]Field
					var buf [512]byte
					DecodeFieldSection(fields[:0], buf[:0], p, uint64(len(buf)))
				}
			}
		}
	})
}

// FuzzDecodeFieldSection decodes arbitrary field sections: no panic, the
// decoded bytes stay in buf (never reallocated) within the size limit, and
// a decoded section re-encodes to one that decodes to the same fields.
func FuzzDecodeFieldSection(f *testing.F) {
	f.Add(browserRequest(), uint16(4096))
	f.Add([]byte{0, 0, 0x51, 0x0b, '/', 'i', 'n', 'd', 'e', 'x', '.', 'h', 't', 'm', 'l'}, uint16(100))
	f.Add([]byte{0, 0, 0x2f, 0x01, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f, 0x81, 0xff}, uint16(100))
	f.Add([]byte{0, 0, 0xff, 0x24}, uint16(100))
	f.Fuzz(func(t *testing.T, p []byte, max uint16) {
		buf := make([]byte, 0, int(max)/2)
		fields, out, err := DecodeFieldSection(nil, buf, p, uint64(max))
		if cap(out) != cap(buf) || len(out) > 0 && &out[0] != &buf[:1][0] {
			t.Fatal("buf reallocated")
		}
		if _, ok := err.(*Error); err != nil && !ok {
			t.Fatalf("unnamed error %v", err)
		}
		if err != nil {
			return
		}
		size := 0
		for _, f := range fields {
			size += len(f.Name) + len(f.Value) + FieldOverhead
		}
		if size > int(max) {
			t.Fatalf("section of %d bytes over the limit %d", size, max)
		}
		var head RequestHead
		if head.Parse(fields, true) == nil {
			var req h1.Request
			head.Build(&req)
		}
		enc := AppendFieldSectionPrefix(nil)
		for _, f := range fields {
			enc = AppendFieldBytes(enc, f.Name, f.Value, len(f.Value)%2 == 0)
		}
		again, _, err := DecodeFieldSection(nil, make([]byte, 0, len(out)), enc, uint64(max))
		if err != nil || len(again) != len(fields) {
			t.Fatalf("re-encoded: %d fields, %v; want %d", len(again), err, len(fields))
		}
		for i := range fields {
			if !bytes.Equal(again[i].Name, asciiLower(fields[i].Name)) || !bytes.Equal(again[i].Value, fields[i].Value) {
				t.Fatalf("field %d: %q=%q, want %q=%q", i, again[i].Name, again[i].Value, fields[i].Name, fields[i].Value)
			}
		}
	})
}

// FuzzRoundTrip encodes fields cut from data (NUL separates names and
// values) and decodes them back unchanged, with and without Huffman.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(":method\x00GET\x00:path\x00/\x00X-Custom\x00value\x00content-type\x00text/plain"), true)
	f.Add([]byte("user-agent\x00\xff\xfe\x00accept\x00*/*"), false)
	f.Fuzz(func(t *testing.T, data []byte, huffman bool) {
		parts := bytes.Split(data, []byte{0})
		enc := AppendFieldSectionPrefix(nil)
		for i := 0; i+1 < len(parts); i += 2 {
			enc = AppendFieldBytes(enc, parts[i], parts[i+1], huffman)
		}
		fields, _, err := DecodeFieldSection(nil, make([]byte, 0, len(data)), enc, 1<<20)
		if err != nil || len(fields) != len(parts)/2 {
			t.Fatalf("decoded %d fields, %v; want %d (encoded %x)", len(fields), err, len(parts)/2, enc)
		}
		for i, f := range fields {
			if !bytes.Equal(f.Name, asciiLower(parts[2*i])) || !bytes.Equal(f.Value, parts[2*i+1]) {
				t.Fatalf("field %d: %q=%q, want %q=%q", i, f.Name, f.Value, parts[2*i], parts[2*i+1])
			}
		}
	})
}
