package router

import (
	"bytes"
	"net/url"
	"slices"

	"github.com/riptide-http/riptide"
)

// The answers for requests that no pattern serves as they are.

// redirectClean sends a path that is not clean to its clean form, or
// straight to that plus "/" when the clean form itself would be redirected.
func (r *Router) redirectClean(c *riptide.Ctx, path []byte) {
	if len(path) == 0 { // "*" or authority-form: there is nothing to route
		if string(c.Method()) == "OPTIONS" {
			r.options(c, r.all.allow)
			return
		}
		r.notFound(c)
		return
	}
	clean := []byte(cleanPath(string(path)))
	m := normalize(nil, clean)
	if !r.matchesExactly(c, m) && r.matchesExactly(c, append(m, '/')) {
		clean = append(clean, '/')
	}
	redirect(c, clean, false)
}

// redirectSlash redirects to path + "/" when that, and not path, is what a
// pattern matches exactly; it reports whether it did.
func (r *Router) redirectSlash(c *riptide.Ctx, path []byte) bool {
	if path[len(path)-1] == '/' {
		return false
	}
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	*buf = append(append((*buf)[:0], path...), '/')
	if !r.matchesExactly(c, *buf) {
		return false
	}
	// Redirect to the request's own path (not the match form) plus "/".
	raw := c.Path()
	if bytes.IndexByte(raw, '%') >= 0 {
		redirect(c, []byte(slashTarget(string(raw))), false)
		return true
	}
	*buf = append(append((*buf)[:0], raw...), '/')
	redirect(c, *buf, true)
	return true
}

// slashTarget is where an escaped path that matches only with a slash
// added is sent: as ServeMux does, the decoded path with the slash, made
// clean ("%2e%2e" decodes to a ".." segment) and escaped again.
func slashTarget(raw string) string {
	p, err := url.PathUnescape(raw)
	if err != nil {
		return raw + "/"
	}
	u := url.URL{Path: cleanPath(p + "/")}
	return u.EscapedPath()
}

// matchesExactly reports whether a pattern matches the request with the
// match-form path p exactly (see exact): under a group's prefix, a
// pattern inside it (see find), so that a path is redirected only to
// where it would be served.
func (r *Router) matchesExactly(c *riptide.Ctx, p []byte) bool {
	var caps captures
	rt := r.find(c, p, &caps)
	return rt != nil && exact(rt, &caps)
}

// redirect answers 307 to path and the request's query.
func redirect(c *riptide.Ctx, path []byte, reuse bool) {
	loc := path
	if q := c.RawQuery(); len(q) > 0 {
		if !reuse {
			loc = append([]byte(nil), path...)
		}
		loc = append(append(loc, '?'), q...)
	}
	c.SetHeaderBytes("Location", loc)
	c.SetStatus(307)
	if m := string(c.Method()); m == "GET" || m == "HEAD" {
		c.SetContentType("text/html; charset=utf-8")
		c.WriteString("<a href=\"")
		writeHTMLEscaped(c, loc)
		c.WriteString("\">Temporary Redirect</a>.\n\n")
	}
}

func writeHTMLEscaped(c *riptide.Ctx, s []byte) {
	start := 0
	for i, b := range s {
		var esc string
		switch b {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		default:
			continue
		}
		c.Write(s[start:i])
		c.WriteString(esc)
		start = i + 1
	}
	c.Write(s[start:])
}

// noMatch answers a request that matched no pattern: OPTIONS and 405 when
// patterns of other methods match the path, 404 otherwise. Under a group
// that owns prefix, only the patterns inside prefix count (see find).
func (r *Router) noMatch(c *riptide.Ctx, path []byte, prefix string) {
	var store [24]string
	allowed := r.allowed(c.Host(), path, prefix, store[:0])
	if len(allowed) <= 1 { // OPTIONS only: the path is not routed
		r.notFound(c)
		return
	}
	if string(c.Method()) == "OPTIONS" {
		r.options(c, allowed)
		return
	}
	setAllow(c, allowed)
	if r.MethodNotAllowed != nil {
		r.MethodNotAllowed.ServeCtx(c)
		return
	}
	c.Error(405, "Method Not Allowed")
}

// allowed appends to dst, sorted, the methods the path, or the path with a
// slash added (which would be redirected to), is routed for: by patterns
// inside prefix, where it is not "".
func (r *Router) allowed(host, path []byte, prefix string, dst []string) []string {
	dst = r.allowedFor(host, path, prefix, dst)
	if path[len(path)-1] != '/' {
		buf := bufPool.Get().(*[]byte)
		defer bufPool.Put(buf)
		*buf = append(append((*buf)[:0], path...), '/')
		dst = r.allowedFor(host, *buf, prefix, dst)
	}
	return dst
}

func (r *Router) allowedFor(host, path []byte, prefix string, dst []string) []string {
	n := len(dst)
	for _, t := range []*table{r.hostTable(host), &r.all} {
		for _, m := range t.allow {
			if !slices.Contains(dst, m) && t.allows(m, path, prefix) {
				dst = append(dst, m)
			}
		}
		if t == &r.all {
			break
		}
	}
	if len(dst) > n {
		slices.Sort(dst)
	}
	return dst
}

func (r *Router) options(c *riptide.Ctx, allowed []string) {
	setAllow(c, allowed)
	c.SetStatus(204)
}

func setAllow(c *riptide.Ctx, allowed []string) {
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	b := (*buf)[:0]
	for i, m := range allowed {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m...)
	}
	*buf = b
	c.SetHeaderBytes("Allow", b) // copied into the response
}

func (r *Router) notFound(c *riptide.Ctx) {
	if r.NotFound != nil {
		r.NotFound.ServeCtx(c)
		return
	}
	c.Error(404, "404 page not found")
}
