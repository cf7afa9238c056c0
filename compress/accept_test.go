package compress

import "testing"

// TestNegotiate: RFC 9110 §12.5.3 Accept-Encoding selection with q-values,
// each row naming the rule it checks.
func TestNegotiate(t *testing.T) {
	all := []Encoding{Zstd, Brotli, Gzip}
	for _, tc := range []struct {
		rule   string
		ae     string
		prefer []Encoding
		want   Encoding
	}{
		{"no header: identity", "", all, Identity},
		{"single coding", "gzip", all, Gzip},
		{"browser list, ties go to the server's preference", "gzip, deflate, br, zstd", all, Zstd},
		{"server preference decides ties", "gzip, br", []Encoding{Gzip, Brotli}, Gzip},
		{"higher q wins over preference", "zstd;q=0.5, gzip", all, Gzip},
		{"q with three decimals", "br;q=0.801, zstd;q=0.8", all, Brotli},
		{"q=0 refuses", "gzip;q=0", all, Identity},
		{"q=0.000 refuses", "br;q=0.000, gzip;q=0.001", all, Gzip},
		{"* accepts what is not named", "*", all, Zstd},
		{"* with a refusal", "*, zstd;q=0", all, Brotli},
		{"* refused, named accepted", "*;q=0, gzip", all, Gzip},
		{"*;q=0 alone: identity", "*;q=0", all, Identity},
		{"identity only", "identity", all, Identity},
		{"identity refused but nothing offered: identity anyway", "identity;q=0, deflate", all, Identity},
		{"x-gzip is gzip", "x-gzip", all, Gzip},
		{"case-insensitive names and q", "GZIP;Q=0.5, BR;q=0.4", all, Gzip},
		{"whitespace around elements and parameters", " br ; q = 0.9 ,\tgzip;q=0.1 ", all, Brotli},
		{"empty elements are skipped", ",,gzip,,", all, Gzip},
		{"malformed q counts as 0", "zstd;q=abc, gzip;q=0.2", all, Gzip},
		{"q above 1 is malformed", "zstd;q=2, gzip;q=0.2", all, Gzip},
		{"q with four decimals is malformed", "zstd;q=0.5555, gzip;q=0.2", all, Gzip},
		{"other parameters ignored", "br;level=3;q=0.7, gzip;q=0.6", all, Brotli},
		{"duplicate names: the highest q", "gzip;q=0, gzip;q=0.5", all, Gzip},
		{"only offered encodings are chosen", "zstd, br", []Encoding{Gzip}, Identity},
		{"unknown codings only", "compress, deflate", all, Identity},
	} {
		if got := Negotiate([]byte(tc.ae), tc.prefer); got != tc.want {
			t.Errorf("%s: Negotiate(%q) = %v, want %v", tc.rule, tc.ae, got, tc.want)
		}
	}
}

func TestNegotiateAllocs(t *testing.T) {
	ae := []byte("gzip;q=0.8, deflate, br;q=0.9, zstd;q=0.85, *;q=0")
	prefer := []Encoding{Zstd, Brotli, Gzip}
	if a := testing.AllocsPerRun(1000, func() { Negotiate(ae, prefer) }); a != 0 {
		t.Errorf("%v allocs, want 0", a)
	}
}
