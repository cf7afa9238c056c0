package h3

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVarint(t *testing.T) {
	tests := []struct {
		rule    string
		in      string
		v       uint64
		minimal bool
	}{
		{"RFC 9000 §A.1: 8-byte sample", "c2197c5eff14e88c", 151288809941952652, true},
		{"RFC 9000 §A.1: 4-byte sample", "9d7f3e7d", 494878333, true},
		{"RFC 9000 §A.1: 2-byte sample", "7bbd", 15293, true},
		{"RFC 9000 §A.1: 1-byte sample", "25", 37, true},
		{"RFC 9000 §16: non-minimal 2-byte 37 is accepted", "4025", 37, false},
		{"RFC 9000 §16: non-minimal 8-byte 0 is accepted", "c000000000000000", 0, false},
		{"RFC 9000 §16: largest value", "ffffffffffffffff", MaxVarint, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := unhex(t, tt.in)
			v, n, err := ParseVarint(append(in, 0xaa))
			if err != nil || v != tt.v || n != len(in) {
				t.Fatalf("ParseVarint = %d, %d, %v; want %d, %d", v, n, err, tt.v, len(in))
			}
			for i := range len(in) {
				if _, _, err := ParseVarint(in[:i]); err != ErrNeedMore {
					t.Fatalf("ParseVarint(%d of %d bytes) err = %v, want ErrNeedMore", i, len(in), err)
				}
			}
			out := AppendVarint(nil, tt.v)
			if got := bytes.Equal(out, in); got != tt.minimal {
				t.Fatalf("AppendVarint(%d) = %x; equal to input %v, want %v", tt.v, out, got, tt.minimal)
			}
			if len(out) != VarintLen(tt.v) {
				t.Fatalf("VarintLen(%d) = %d, AppendVarint wrote %d", tt.v, VarintLen(tt.v), len(out))
			}
		})
	}
}

// RFC 9000 §16: AppendVarint uses the shortest length at every boundary.
func TestVarintBoundaries(t *testing.T) {
	for _, c := range []struct {
		v uint64
		n int
	}{{0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 4}, {1<<30 - 1, 4}, {1 << 30, 8}, {MaxVarint, 8}} {
		b := AppendVarint(nil, c.v)
		v, n, err := ParseVarint(b)
		if len(b) != c.n || v != c.v || n != c.n || err != nil {
			t.Errorf("%d: encoded %x (%d bytes, want %d), parsed %d, %d, %v", c.v, b, len(b), c.n, v, n, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AppendVarint(2^62) did not panic")
		}
	}()
	AppendVarint(nil, MaxVarint+1)
}

func TestErrorCodes(t *testing.T) {
	if s := CodeFrameUnexpected.String(); s != "H3_FRAME_UNEXPECTED" {
		t.Errorf("CodeFrameUnexpected = %q", s)
	}
	if s := CodeVersionFallback.String(); s != "H3_VERSION_FALLBACK" {
		t.Errorf("CodeVersionFallback = %q", s)
	}
	if s := CodeQPACKDecompressionFailed.String(); s != "QPACK_DECOMPRESSION_FAILED" {
		t.Errorf("CodeQPACKDecompressionFailed = %q", s)
	}
	if s := ErrorCode(0x21).String(); s != "0x21" {
		t.Errorf("ErrorCode(0x21) = %q", s)
	}
	if c := CodeOf(ErrDynamicReference); c != CodeQPACKDecompressionFailed {
		t.Errorf("CodeOf(ErrDynamicReference) = %v", c)
	}
	if c := CodeOf(errors.New("x")); c != CodeInternalError {
		t.Errorf("CodeOf(other) = %v", c)
	}
	if c := CodeOf(nil); c != CodeNoError {
		t.Errorf("CodeOf(nil) = %v", c)
	}
	if s := ErrSecondSettings.Error(); s != "h3: second SETTINGS frame (H3_FRAME_UNEXPECTED)" {
		t.Errorf("Error() = %q", s)
	}
}
