package h3

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func decodeAll(t testing.TB, p []byte, maxSize uint64) ([]Field, error) {
	t.Helper()
	fields, _, err := DecodeFieldSection(nil, make([]byte, 0, 1<<16), p, maxSize)
	return fields, err
}

func fieldsString(fs []Field) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s=%s;", f.Name, f.Value)
	}
	return b.String()
}

func TestDecodeFieldSection(t *testing.T) {
	tests := []struct {
		rule string
		in   string // hex
		max  uint64
		want string
		err  error
	}{
		{"RFC 9204 §B.1: literal with static name reference", "0000510b2f696e6465782e68746d6c", 0, ":path=/index.html;", nil},
		{"RFC 9204 §4.5.2: indexed static field line", "0000d1", 0, ":method=GET;", nil},
		{"RFC 9204 §4.5.2: last static entry (98)", "0000ff23", 0, "x-frame-options=sameorigin;", nil},
		{"RFC 9204 §4.5.6: literal with literal name", "000023616263017a", 0, "abc=z;", nil},
		{"RFC 9204 §4.5.6: literal name with the N bit", "000033616263017a", 0, "abc=z;", nil},
		{"RFC 9204 §4.5.4: literal with name reference, Huffman value", "00005f508cf1e3c2e5f23a6ba0ab90f4ff", 0, "", nil},
		{"RFC 9204 §4.5.1: empty field section", "0000", 0, "", nil},
		{"RFC 9204 §4.5.1.1: Required Insert Count not 0", "0100d1", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.1.2: Delta Base not 0", "0001d1", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.1.2: negative Base (sign bit)", "0080d1", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.2: indexed dynamic field line", "000080", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.3: indexed post-base field line", "000010", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.4: literal with dynamic name reference", "00004000", 0, "", ErrDynamicReference},
		{"RFC 9204 §4.5.5: literal with post-base name reference", "00000000", 0, "", ErrDynamicReference},
		{"RFC 9204 §2.2.3: static index 99", "0000ff24", 0, "", ErrBadStaticIndex},
		{"RFC 9204 §2.2.3: static name index 99", "00005f5400", 0, "", ErrBadStaticIndex},
		{"RFC 9204 §4.5.1: no prefix", "", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.5.1: half a prefix", "00", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.1.2: value longer than the section", "0000510b2f69", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.1.2: name ref without value", "000051", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.1.2: literal name longer than the section", "000027ff", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.1.1: prefix integer cut", "0000ff", 0, "", ErrQPACKTruncated},
		{"RFC 9204 §4.1.1: prefix integer overflow", "0000ffffffffffffffffffffff01", 0, "", ErrQPACKInteger},
		{"RFC 9204 §4.1.2: invalid Huffman (8 bits of padding)", "00005181ff", 0, "", ErrHuffman},
		{"RFC 9114 §4.2.2: section over the size limit", "0000d1d1", 2*(7+3+32) - 1, "", ErrFieldSectionTooLarge},
		{"RFC 9114 §4.2.2: section at the size limit", "0000d1d1", 2 * (7 + 3 + 32), ":method=GET;:method=GET;", nil},
		{"RFC 9114 §4.2.2: literal over the limit before copying", "00005f5032" + strings.Repeat("61", 50), 40, "", ErrFieldSectionTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1 << 16
			}
			fields, err := decodeAll(t, unhex(t, tt.in), max)
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got := fieldsString(fields); err == nil && tt.want != "" && got != tt.want {
				t.Fatalf("fields %q, want %q", got, tt.want)
			}
		})
	}
	// The Huffman row above decodes to user-agent: www.example.com.
	fields, err := decodeAll(t, unhex(t, "00005f508cf1e3c2e5f23a6ba0ab90f4ff"), 1<<16)
	if err != nil || fieldsString(fields) != "user-agent=www.example.com;" {
		t.Fatalf("Huffman value: %q, %v", fieldsString(fields), err)
	}
}

// DecodeFieldSection copies every name and value into buf, never past its
// capacity, and leaves the input's bytes unreferenced.
func TestDecodeIntoCallerBuffer(t *testing.T) {
	p := AppendFieldSectionPrefix(nil)
	p = AppendField(p, ":method", "GET", false)
	p = AppendField(p, ":path", "/hello", false)
	p = AppendField(p, "x-long", strings.Repeat("v", 100), true)
	buf := make([]byte, 0, 256)
	fields, out, err := DecodeFieldSection(nil, buf, p, 1<<16)
	if err != nil || len(fields) != 3 {
		t.Fatal(fields, err)
	}
	if &out[:1][0] != &buf[:1][0] {
		t.Fatal("buf was reallocated")
	}
	clear(p)
	if got := fieldsString(fields); got != ":method=GET;:path=/hello;x-long="+strings.Repeat("v", 100)+";" {
		t.Fatalf("fields after clearing the input: %q", got)
	}
	// One byte less room than the decoded bytes: refused, buf not grown.
	total := len(out)
	small := make([]byte, 0, total-1)
	p = AppendFieldSectionPrefix(nil)
	p = AppendField(p, ":method", "GET", false)
	p = AppendField(p, ":path", "/hello", false)
	p = AppendField(p, "x-long", strings.Repeat("v", 100), true)
	if _, out, err := DecodeFieldSection(nil, small, p, 1<<16); err != ErrFieldSectionTooLarge || cap(out) != total-1 {
		t.Fatalf("small buf: err %v, cap %d", err, cap(out))
	}
}

func TestAppendField(t *testing.T) {
	tests := []struct {
		rule        string
		name, value string
		huffman     bool
		want        string
	}{
		{"RFC 9204 §4.5.2: exact static match is indexed", ":method", "GET", true, "d1"},
		{"RFC 9204 §4.5.2: exact match after lowering the name", "Content-Type", "text/plain", false, "f5"},
		{"RFC 9204 §4.5.2: index above the 6-bit prefix", "x-frame-options", "sameorigin", false, "ff23"},
		{"RFC 9204 §4.5.4: static name reference", ":path", "/x", false, "51022f78"},
		{"RFC 9204 §4.5.4: name index above the 4-bit prefix", "user-agent", "a", false, "5f5001" + "61"},
		{"RFC 9204 §4.5.6: literal name, lowered", "X-Custom", "v", false, "2701" + "782d637573746f6d" + "0176"},
		{"RFC 9204 §4.5.6: Huffman name and value when shorter", "custom-key", "custom-value", true, "2f01" + "25a849e95ba97d7f" + "89" + "25a849e95bb8e8b4bf"},
		{"RFC 9204 §4.1.2: raw when Huffman is not shorter", "x", "\x00", true, "2178" + "0100"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got := AppendField([]byte{0xee}, tt.name, tt.value, tt.huffman)
			if want := append([]byte{0xee}, unhex(t, tt.want)...); !bytes.Equal(got, want) {
				t.Fatalf("AppendField = %x, want %x", got, want)
			}
			b := AppendFieldBytes(nil, []byte(tt.name), []byte(tt.value), tt.huffman)
			if !bytes.Equal(b, got[1:]) {
				t.Fatalf("AppendFieldBytes = %x, AppendField %x", b, got[1:])
			}
			fields, err := decodeAll(t, append([]byte{0, 0}, b...), 1<<16)
			if err != nil || len(fields) != 1 || string(fields[0].Name) != strings.ToLower(tt.name) || string(fields[0].Value) != tt.value {
				t.Fatalf("decoded %q, %v", fieldsString(fields), err)
			}
		})
	}
}

func TestAppendStatus(t *testing.T) {
	for code, want := range map[int]string{200: "d9", 404: "db", 425: "ff07", 201: "5f0903323031", 599: "5f0903353939"} {
		if got := AppendStatus(nil, code); !bytes.Equal(got, unhex(t, want)) {
			t.Errorf("AppendStatus(%d) = %x, want %s", code, got, want)
		}
	}
}

// Every static entry encodes as its index and decodes back to itself.
func TestStaticTableRoundTrip(t *testing.T) {
	if len(staticTable) != 99 {
		t.Fatalf("%d entries", len(staticTable))
	}
	for i, e := range staticTable {
		b := AppendField(AppendFieldSectionPrefix(nil), e[0], e[1], true)
		want := appendInt(AppendFieldSectionPrefix(nil), 0xc0, 6, uint64(i))
		if !bytes.Equal(b, want) {
			t.Errorf("entry %d %s=%s encodes as %x, want %x", i, e[0], e[1], b, want)
		}
		fields, err := decodeAll(t, b, 1<<16)
		if err != nil || len(fields) != 1 || string(fields[0].Name) != e[0] || string(fields[0].Value) != e[1] {
			t.Errorf("entry %d decodes to %q, %v", i, fieldsString(fields), err)
		}
	}
}
