// Package ascii holds the small, allocation-free text rules of HTTP that the
// server (root), the client and the h1 codec share: ASCII case folding,
// comma-separated token lists and the authority (host[:port]) grammar.
//
// It does no I/O, so the sans-I/O h1 codec may import it. Every function
// takes string or []byte without converting, so none allocates.
package ascii

// lower folds an ASCII letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// EqualFold reports whether a equals b under ASCII case folding (not Unicode
// folding: in HTTP, "K" and the Kelvin sign differ).
func EqualFold[A, B ~string | ~[]byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// isOWS reports optional whitespace (RFC 9110 §5.6.3).
func isOWS(c byte) bool { return c == ' ' || c == '\t' }

// HasToken reports whether the comma-separated list v (RFC 9110 §5.6.1)
// holds tok, compared case-insensitively with the items' whitespace trimmed.
func HasToken[V ~string | ~[]byte](v V, tok string) bool {
	for start := 0; start <= len(v); {
		end := start
		for end < len(v) && v[end] != ',' {
			end++
		}
		i, j := start, end
		for i < j && isOWS(v[i]) {
			i++
		}
		for j > i && isOWS(v[j-1]) {
			j--
		}
		if EqualFold(v[i:j], tok) {
			return true
		}
		start = end + 1
	}
	return false
}

// IsAlpha reports an ASCII letter.
func IsAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// IsHex reports an ASCII hexadecimal digit.
func IsHex(c byte) bool {
	return (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'f')
}

// Unhex is the value of the hexadecimal digit c (IsHex(c) must hold).
func Unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// ValidAuthority checks host[:port] as used in Host, in absolute- and
// authority-form targets and in a client's URL: no userinfo ('@'), no path,
// a non-empty host that is a reg-name or an IP-literal, and a numeric port
// of at most five digits. needPort requires the port (CONNECT).
func ValidAuthority[A ~string | ~[]byte](a A, needPort bool) bool {
	if len(a) == 0 {
		return false
	}
	var host, port A
	if a[0] == '[' {
		end := indexByte(a, ']')
		if end < 2 {
			return false
		}
		for i := 1; i < end; i++ {
			if c := a[i]; !IsHex(c) && c != ':' && c != '.' {
				return false
			}
		}
		rest := a[end+1:]
		if len(rest) > 0 {
			if rest[0] != ':' {
				return false
			}
			port = rest[1:]
		}
	} else {
		host = a
		if c := lastIndexByte(a, ':'); c >= 0 {
			host, port = a[:c], a[c+1:]
		}
		if len(host) == 0 {
			return false
		}
		for i := 0; i < len(host); i++ {
			c := host[i]
			if regName[c] == regNameOK {
				continue
			}
			if regName[c] == 0 {
				return false
			}
			// RFC 3986 §3.2.2: percent-encoding in a reg-name is for
			// non-ASCII (UTF-8) bytes. "%61" for "a" or "%00" would give one
			// host two spellings, or smuggle a NUL to a resolver, so only
			// %80-%FF is accepted.
			if c == '%' {
				if i+2 >= len(host) || !IsHex(host[i+1]) || !IsHex(host[i+2]) || host[i+1] < '8' {
					return false
				}
				i += 2
			}
		}
	}
	// RFC 3986 allows an empty port after ':'; CONNECT needs a real one.
	if needPort && len(port) == 0 {
		return false
	}
	for i := 0; i < len(port); i++ {
		if c := port[i]; c < '0' || c > '9' {
			return false
		}
	}
	return len(port) <= 5
}

// regName classifies the bytes of a reg-name for ValidAuthority, which
// runs on every request's Host: regNameOK, regNamePercent for '%', 0 for
// the rest. One load a byte instead of isRegNameChar's compares.
var regName [256]uint8

const (
	regNameOK = 1 + iota
	regNamePercent
)

func init() {
	for c := range regName {
		if isRegNameChar(byte(c)) {
			regName[c] = regNameOK
		}
	}
	regName['%'] = regNamePercent
}

// isRegNameChar reports the characters of RFC 3986 reg-name (unreserved,
// pct-encoded and sub-delims).
func isRegNameChar(c byte) bool {
	if IsAlpha(c) || (c >= '0' && c <= '9') {
		return true
	}
	switch c {
	case '-', '.', '_', '~', '%', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

func indexByte[A ~string | ~[]byte](a A, c byte) int {
	for i := 0; i < len(a); i++ {
		if a[i] == c {
			return i
		}
	}
	return -1
}

func lastIndexByte[A ~string | ~[]byte](a A, c byte) int {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] == c {
			return i
		}
	}
	return -1
}

// ParseDigits parses a non-empty run of ASCII digits. ok is false for an
// empty input, any non-digit, or a value above 1<<62 (which no real body
// reaches and which keeps later additions from overflowing).
func ParseDigits(b []byte) (n int64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		// Checked before multiplying: n*10 past 2^63 would wrap.
		if n > (1<<62-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// IsLower reports whether s has no upper-case ASCII letter.
func IsLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// ParseLength parses a Content-Length value: 1 to 18 ASCII digits.
func ParseLength[V ~string | ~[]byte](v V) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n, true
}
