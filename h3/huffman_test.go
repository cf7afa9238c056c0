package h3

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func TestHuffmanRFC7541(t *testing.T) {
	// RFC 7541 §C.4 and §C.6.
	for _, c := range []struct{ s, hex string }{
		{"www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"},
		{"no-cache", "a8eb10649cbf"},
		{"custom-key", "25a849e95ba97d7f"},
		{"custom-value", "25a849e95bb8e8b4bf"},
		{"302", "6402"},
		{"private", "aec3771a4b"},
		{"Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff"},
		{"https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3"},
		{"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1", "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"},
	} {
		want := unhex(t, c.hex)
		if got := appendHuffman(nil, c.s, false); !bytes.Equal(got, want) {
			t.Errorf("encode %q = %x, want %x", c.s, got, want)
		}
		if n := huffmanLen(c.s, false); n != len(want) {
			t.Errorf("huffmanLen(%q) = %d, want %d", c.s, n, len(want))
		}
		got, err := huffmanDecode(make([]byte, 0, 64), want)
		if err != nil || string(got) != c.s {
			t.Errorf("decode %x = %q, %v; want %q", want, got, err, c.s)
		}
	}
}

// The derived canonical code agrees with x/net's HPACK encoder on every
// byte, and decoding inverts it, for every symbol and random strings.
func TestHuffmanMatchesHPACK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var s []byte
		if i < 256 {
			s = []byte{byte(i)}
		} else {
			s = make([]byte, r.IntN(40))
			for j := range s {
				s[j] = byte(r.IntN(256))
			}
		}
		want := hpack.AppendHuffmanString(nil, string(s))
		got := appendHuffman(nil, string(s), false)
		if !bytes.Equal(got, want) {
			t.Fatalf("encode %x = %x, want %x", s, got, want)
		}
		dec, err := huffmanDecode(make([]byte, 0, len(s)), got)
		if err != nil || !bytes.Equal(dec, s) {
			t.Fatalf("decode %x = %x, %v; want %x", got, dec, err, s)
		}
	}
}

func TestHuffmanDecodeErrors(t *testing.T) {
	eos := appendHuffman(nil, "a", false) // 'a' is 5 bits: 00011 then 111 padding
	tests := []struct {
		rule string
		in   []byte
		err  error
	}{
		{"RFC 7541 §5.2: padding of 8 bits", append(eos, 0xff), ErrHuffman},
		{"RFC 7541 §5.2: padding not all ones", []byte{0x18}, ErrHuffman}, // 00011 000
		{"RFC 7541 §5.2: EOS in the string", []byte{0xff, 0xff, 0xff, 0xfc}, ErrHuffman},
		{"RFC 7541 §5.2: EOS after a symbol", []byte{0x1f, 0xff, 0xff, 0xff, 0xff}, ErrHuffman},
		{"RFC 7541 §5.2: padding of 7 ones", appendHuffman(nil, "aaaaa", false), nil}, // 25 bits of code
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			_, err := huffmanDecode(make([]byte, 0, 16), tt.in)
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
	if n := len(appendHuffman(nil, "aaaaa", false)); n != 4 {
		t.Fatalf("aaaaa takes %d bytes, want 4 (7 bits of padding)", n)
	}
	// The output never grows past dst's capacity.
	out, err := huffmanDecode(make([]byte, 0, 3), appendHuffman(nil, "abcd", false))
	if err != ErrFieldSectionTooLarge || cap(out) != 3 {
		t.Fatalf("full dst: %q, %v", out, err)
	}
	out, err = huffmanDecode(make([]byte, 0, 4), appendHuffman(nil, "abcd", false))
	if err != nil || string(out) != "abcd" {
		t.Fatalf("exactly full dst: %q, %v", out, err)
	}
}
