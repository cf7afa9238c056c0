package ws

import (
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// Steady state the codec allocates nothing per frame or message: parse,
// check, unmask, UTF-8, write a header, compress and inflate (pooled,
// without takeover and with it).
func TestCodecAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	frame := []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}
	payload := make([]byte, 5)
	out := make([]byte, 0, 64)
	var r Reader
	if n := testing.AllocsPerRun(100, func() {
		h, n, _ := ParseHeader(frame)
		if r.Frame(&h) != nil {
			t.Fatal("frame refused")
		}
		copy(payload, frame[n:])
		Mask(h.Key, 0, payload)
		r.Payload(payload)
		r.End()
		out = AppendHeader(out[:0], Header{Fin: true, Op: OpText, Length: 5})
	}); n != 0 {
		t.Errorf("frame codec: %v allocs per frame, want 0", n)
	}
	msg := []byte("a message of some length, a message of some length")
	for _, takeover := range []bool{false, true} {
		c := Compressor{Takeover: takeover}
		f := Inflater{Takeover: takeover}
		z := make([]byte, 0, 256)
		dst := make([]byte, 0, 256)
		run := func() {
			var err error
			if z, err = c.Compress(z[:0], msg); err != nil {
				t.Fatal(err)
			}
			if dst, err = f.Inflate(dst[:0], z, 1024); err != nil || string(dst) != string(msg) {
				t.Fatalf("round trip: %v", err)
			}
		}
		run() // warm the pools and the takeover window
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("deflate takeover=%v: %v allocs per message, want 0", takeover, n)
		}
	}
}
