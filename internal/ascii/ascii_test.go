package ascii

import (
	"strings"
	"testing"
)

func TestEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Content-Length", "content-length", true},
		{"CONTENT-LENGTH", "Content-Length", true},
		{"content-lengt", "content-length", false},
		{"\u212a", "k", false}, // the Kelvin sign folds to k only in Unicode
		{"", "", true},
	} {
		if got := EqualFold(tc.a, tc.b); got != tc.want {
			t.Errorf("EqualFold(%q, %q) = %v", tc.a, tc.b, got)
		}
		if got := EqualFold([]byte(tc.a), tc.b); got != tc.want {
			t.Errorf("EqualFold([]byte(%q), %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestHasToken(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"close", true},
		{"keep-alive, Close", true},
		{" \tCLOSE\t ,x", true},
		{"x,,close,", true},
		{"closed", false},
		{"", false},
		{"clo se", false},
		{"\u017fclose", false}, // no Unicode folding
	} {
		if got := HasToken(tc.v, "close"); got != tc.want {
			t.Errorf("HasToken(%q, close) = %v", tc.v, got)
		}
		if got := HasToken([]byte(tc.v), "close"); got != tc.want {
			t.Errorf("HasToken([]byte(%q), close) = %v", tc.v, got)
		}
	}
}

func TestValidAuthority(t *testing.T) {
	for _, tc := range []struct {
		a        string
		needPort bool
		want     bool
	}{
		{"example.com", false, true},
		{"example.com:8080", false, true},
		{"example.com:", false, true},      // RFC 3986: empty port
		{"example.com:", true, false},      // CONNECT needs one
		{"example.com", true, false},       // CONNECT needs one
		{"[::1]:443", true, true},          // IP-literal
		{"[::1", false, false},             // unclosed
		{"[zz]", false, false},             // not hex
		{"user@example.com", false, false}, // no userinfo
		{"example.com/path", false, false}, // no path
		{":80", false, false},              // empty host
		{"example.com:123456", false, false},
		{"example.com:8a", false, false},
		{"caf%C3%A9.example", false, true}, // non-ASCII escapes only
		{"%61.example", false, false},
		{"", false, false},
	} {
		if got := ValidAuthority(tc.a, tc.needPort); got != tc.want {
			t.Errorf("ValidAuthority(%q, %v) = %v", tc.a, tc.needPort, got)
		}
		if got := ValidAuthority([]byte(tc.a), tc.needPort); got != tc.want {
			t.Errorf("ValidAuthority([]byte(%q), %v) = %v", tc.a, tc.needPort, got)
		}
	}
}

// TestRegNameBytes checks every byte in a host against RFC 3986's
// reg-name characters (unreserved and sub-delims; '%' only as an escape).
func TestRegNameBytes(t *testing.T) {
	const regName = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;="
	for c := 0; c < 256; c++ {
		want := strings.IndexByte(regName, byte(c)) >= 0
		for _, a := range []string{"a" + string([]byte{byte(c)}) + "b:80", string([]byte{byte(c)}) + "zz"} {
			if got := ValidAuthority([]byte(a), false); got != want {
				t.Fatalf("ValidAuthority(%q) = %v, want %v", a, got, want)
			}
			if got := ValidAuthority(a, false); got != want {
				t.Fatalf("ValidAuthority(string %q) = %v, want %v", a, got, want)
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	b := []byte("Keep-Alive, Close")
	n := testing.AllocsPerRun(100, func() {
		if !EqualFold(b[12:], "close") || !HasToken(b, "close") || !ValidAuthority(b[:4], false) {
			t.Fatal("wrong answer")
		}
	})
	if n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

func TestHex(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := -1
		switch {
		case '0' <= c && c <= '9':
			want = c - '0'
		case 'a' <= c && c <= 'f':
			want = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			want = c - 'A' + 10
		}
		if IsHex(byte(c)) != (want >= 0) {
			t.Errorf("IsHex(%q) = %v", rune(c), !(want >= 0))
		}
		if want >= 0 && int(Unhex(byte(c))) != want {
			t.Errorf("Unhex(%q) = %d, want %d", rune(c), Unhex(byte(c)), want)
		}
	}
}

func TestParseDigits(t *testing.T) {
	for _, c := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"12", 12, true}, {"007", 7, true},
		{"4611686018427387904", 1 << 62, true}, {"4611686018427387905", 0, false},
		{"99999999999999999999999", 0, false},
		// Past 2^63 the multiplication wraps: these once parsed as 1, 0, a
		// negative number and 1553255926290448384.
		{"18446744073709551617", 0, false}, {"18446744073709551616", 0, false},
		{"10000000000000000000", 0, false}, {"20000000000000000000", 0, false},
		{"4611686018427387910", 0, false},
		{"", 0, false}, {"1x", 0, false}, {" 1", 0, false}, {"-1", 0, false}, {"1,1", 0, false},
	} {
		if n, ok := ParseDigits([]byte(c.in)); n != c.n || ok != c.ok {
			t.Errorf("ParseDigits(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}
