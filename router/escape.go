package router

import (
	"bytes"
	"path"
	"strings"

	"github.com/riptide-http/riptide/internal/ascii"
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
		if c == '%' && i+2 < len(p) && ascii.IsHex(p[i+1]) && ascii.IsHex(p[i+2]) {
			if d := ascii.Unhex(p[i+1])<<4 | ascii.Unhex(p[i+2]); d != '/' {
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

// isClean reports whether p is a clean absolute path: no empty, "." or ".."
// segments (a trailing slash is fine). The router redirects other paths to
// their clean form, as ServeMux does.
func isClean[S string | []byte](p S) bool {
	return len(p) > 0 && p[0] == '/' && cleanSegments(p[1:])
}

// cleanSegments reports whether p, the segments after a '/', has no empty,
// "." or ".." segment, but for an empty last one (a trailing slash).
func cleanSegments[S string | []byte](p S) bool {
	for i := 0; i < len(p); i++ {
		if i > 0 && p[i-1] != '/' {
			continue
		}
		switch p[i] {
		case '/':
			return false
		case '.':
			j := i + 1
			if j < len(p) && p[j] == '.' {
				j++
			}
			if j == len(p) || p[j] == '/' {
				return false
			}
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
