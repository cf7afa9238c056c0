package compress

import "github.com/riptide-http/riptide/h1"

// Encoding is a content coding the middleware can produce.
type Encoding uint8

// The encodings, by their Content-Encoding token.
const (
	Identity Encoding = iota // no compression
	Gzip                     // "gzip", RFC 1952, klauspost/compress/gzip
	Zstd                     // "zstd", RFC 8878, klauspost/compress/zstd
	Brotli                   // "br", RFC 7932, andybalholm/brotli
	numEncodings
)

// String returns the Content-Encoding token ("identity" for Identity).
func (e Encoding) String() string {
	switch e {
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	case Brotli:
		return "br"
	}
	return "identity"
}

// Negotiate picks the encoding for a request's Accept-Encoding value (RFC
// 9110 §12.5.3) among prefer, which lists the encodings the server offers
// in its order of preference: the one with the highest q-value wins, a tie
// going to the earlier in prefer. A coding with q=0 is refused; "*"
// stands for every coding not named; "x-gzip" is gzip. Identity is
// returned when nothing offered is acceptable (also for an empty or
// missing header: RFC 9110 allows any coding then, but an old client that
// sends none may not decode one). Identity is always acceptable to this
// middleware: a client that refuses it as well gets an uncompressed
// response rather than a 406. Negotiate does not allocate.
func Negotiate(acceptEncoding []byte, prefer []Encoding) Encoding {
	// q-values in thousandths; -1 means not named.
	var q [numEncodings]int
	for i := range q {
		q[i] = -1
	}
	star := -1
	v := acceptEncoding
	for len(v) > 0 {
		var elem []byte
		elem, v = cut(v, ',')
		name, params := cut(elem, ';')
		name = trim(name)
		if len(name) == 0 {
			continue
		}
		qv := parseQ(params)
		switch {
		case h1.EqualFold(name, "gzip"), h1.EqualFold(name, "x-gzip"):
			q[Gzip] = max(q[Gzip], qv)
		case h1.EqualFold(name, "zstd"):
			q[Zstd] = max(q[Zstd], qv)
		case h1.EqualFold(name, "br"):
			q[Brotli] = max(q[Brotli], qv)
		case len(name) == 1 && name[0] == '*':
			star = max(star, qv)
		}
	}
	best, bestQ := Identity, 0
	for _, e := range prefer {
		if e <= Identity || e >= numEncodings {
			continue
		}
		qe := q[e]
		if qe < 0 {
			qe = star
		}
		if qe > bestQ {
			best, bestQ = e, qe
		}
	}
	return best
}

// parseQ returns the q parameter among params (";q=0.5;..."), in
// thousandths: 1000 when absent, 0 when malformed (RFC 9110 §12.4.2:
// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )).
func parseQ(params []byte) int {
	for len(params) > 0 {
		var p []byte
		p, params = cut(params, ';')
		p = trim(p)
		if len(p) < 2 || p[0]|0x20 != 'q' {
			continue
		}
		p = trim(p[1:])
		if len(p) == 0 || p[0] != '=' {
			continue
		}
		return qvalue(trim(p[1:]))
	}
	return 1000
}

func qvalue(s []byte) int {
	if len(s) == 0 || (s[0] != '0' && s[0] != '1') {
		return 0
	}
	n := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return n
	}
	if s[1] != '.' || len(s) > 5 {
		return 0
	}
	scale := 100
	for _, c := range s[2:] {
		if c < '0' || c > '9' {
			return 0
		}
		n += int(c-'0') * scale
		scale /= 10
	}
	return min(n, 1000)
}

// cut splits s at the first sep.
func cut(s []byte, sep byte) (before, after []byte) {
	for i, c := range s {
		if c == sep {
			return s[:i], s[i+1:]
		}
	}
	return s, nil
}

// trim removes surrounding spaces and tabs (HTTP's OWS).
func trim(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
