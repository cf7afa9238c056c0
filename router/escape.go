package router

import (
	"bytes"
	"path"
	"strings"
)

// Paths are matched in a "match form" that equals net/http.ServeMux's
// per-segment unescaping where it matters: every %XX escape is decoded
// except %2F, which is kept (in upper case) so that it cannot act as a
// segment separator. Pattern literals are stored in the same form. A path
// without '%' is its own match form, so the usual request is matched in
// place, without a copy.

// normalize appends the match form of p to dst.
func normalize(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			if d := unhex(p[i+1])<<4 | unhex(p[i+2]); d != '/' {
				c = d
			} else {
				dst = append(dst, "%2F"...)
				i += 2
				continue
			}
			i += 2
		}
		dst = append(dst, c)
	}
	return dst
}

// unescapeSlashes appends v with its %2F escapes (match form) decoded.
func unescapeSlashes(dst, v []byte) []byte {
	for {
		i := bytes.Index(v, []byte("%2F"))
		if i < 0 {
			return append(dst, v...)
		}
		dst = append(append(dst, v[:i]...), '/')
		v = v[i+3:]
	}
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

// isClean reports whether p is a clean absolute path: no empty, "." or ".."
// segments (a trailing slash is fine). The router redirects other paths to
// their clean form, as ServeMux does.
func isClean[S string | []byte](p S) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		rest := p[i+1:]
		switch {
		case len(rest) > 0 && rest[0] == '/':
			return false
		case len(rest) > 0 && rest[0] == '.' && (len(rest) == 1 || rest[1] == '/'):
			return false
		case len(rest) > 1 && rest[0] == '.' && rest[1] == '.' && (len(rest) == 2 || rest[2] == '/'):
			return false
		}
	}
	return true
}

// cleanPath returns the clean form of p, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}
