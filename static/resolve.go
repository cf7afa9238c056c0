package static

// maxPath bounds the decoded request path: longer ones are refused before
// any file system call.
const maxPath = 1024

// resolve turns a raw, still percent-encoded request path (which must start
// with '/') into a path relative to the root: slash-separated segments with
// no empty, "." or ".." segment, no backslash, NUL or other control byte
// and no leading '/', written into dst[:0]. dir reports a trailing slash
// (a directory was asked for). Anything that could name a file outside the
// root, or name one file two ways, is refused (ok false) rather than
// cleaned: "..", encoded slashes and backslashes ("%2F", "%5C"), NUL
// ("%00"), control bytes, a hidden segment (".git") unless dotFiles. An
// empty result (the root itself) is valid, with dir true.
func resolve(dst, raw []byte, dotFiles bool) (rel []byte, dir, ok bool) {
	if len(raw) == 0 || raw[0] != '/' {
		return nil, false, false
	}
	rel = dst[:0]
	segStart := 0 // where the current segment starts in rel
	for i := 1; i <= len(raw); i++ {
		if i == len(raw) || raw[i] == '/' {
			seg := rel[segStart:]
			switch {
			case len(seg) == 0:
				// "//" or the trailing slash: no empty segment is kept.
				if i < len(raw) {
					return nil, false, false
				}
			case seg[0] == '.' && (len(seg) == 1 || len(seg) == 2 && seg[1] == '.'):
				return nil, false, false
			case seg[0] == '.' && !dotFiles:
				return nil, false, false
			default:
				if i < len(raw) {
					rel = append(rel, '/')
					segStart = len(rel)
				}
			}
			continue
		}
		c := raw[i]
		if c == '%' {
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return nil, false, false
			}
			c = unhex(raw[i+1])<<4 | unhex(raw[i+2])
			i += 2
			if c == '/' {
				return nil, false, false // "%2F": a slash the client hid
			}
		}
		if c < 0x20 || c == 0x7f || c == '\\' || c == ':' && !colonOK {
			return nil, false, false
		}
		if len(rel) >= maxPath {
			return nil, false, false
		}
		rel = append(rel, c)
	}
	dir = raw[len(raw)-1] == '/'
	if dir && len(rel) > 0 {
		rel = rel[:len(rel)-1] // drop the '/' appended before the empty last segment
	}
	return rel, dir, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
