package router

import (
	"bytes"
	"slices"
	"sync"

	"github.com/riptide-http/riptide"
)

// ServeCtx routes the request to the handler of its most specific pattern.
// A path that is not clean ("//", "." or ".." segments) is redirected to its
// clean form, and one that matches only with a trailing slash added to it
// (e.g. "/tree" for "/tree/"), with 307 as ServeMux does. OPTIONS is
// answered with 204 and Allow, and a method no pattern of the path has
// with 405 and Allow (see MethodNotAllowed); other requests that match no
// pattern with NotFound.
func (r *Router) ServeCtx(c *riptide.Ctx) {
	if r.serve != nil {
		r.serve.ServeCtx(c)
		return
	}
	r.dispatch(c)
}

// bufPool holds scratch buffers for the rare request that needs one: a
// path with escapes, a redirect, an Allow header.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

func (r *Router) dispatch(c *riptide.Ctx) {
	path := c.Path()
	var caps captures
	rt := r.find(c, path, &caps)
	var buf *[]byte
	// A path without '%' needs no second match; one IndexByte over it
	// rules that out more cheaply than a look at each capture, but a
	// route without captures needs neither.
	rematch := false
	if rt == nil {
		rematch = bytes.IndexByte(path, '%') >= 0
	} else if len(rt.names) > 0 {
		rematch = bytes.IndexByte(path, '%') >= 0 && escapedCapture(rt, &caps)
	}
	if rematch {
		// Match again in match form (escape.go). Pattern text holds no '%'
		// but in "%2F", which match form keeps, so a match whose captures
		// hold no '%' is the match-form match already: the usual request
		// is matched once, in place. Match form never grows the path;
		// values with %2F decoded after it fit in as much again, so the
		// buffer is not reallocated while slices of it are in use.
		buf = bufPool.Get().(*[]byte)
		defer bufPool.Put(buf)
		*buf = slices.Grow((*buf)[:0], 2*len(path))
		*buf = normalize(*buf, path)
		path = *buf
		rt = r.find(c, path, &caps)
	}
	// Cleanliness is a property of the path as sent (ServeMux cleans the
	// escaped path: "%2e%2e" is not ".."), so the captures of a match in
	// place stand for it, while a match in match form is checked whole.
	if rt == nil || buf != nil {
		if !isClean(c.Path()) {
			r.redirectClean(c, c.Path())
			return
		}
	} else if !cleanCaptures(rt, &caps) {
		r.redirectClean(c, c.Path())
		return
	}
	if rt != nil && (exact(rt, &caps) || path[len(path)-1] == '/') {
		rt.set(c, &caps, buf)
		rt.h.ServeCtx(c)
		return
	}
	if r.redirectSlash(c, path) {
		return
	}
	if rt != nil {
		rt.set(c, &caps, buf)
		rt.h.ServeCtx(c)
		return
	}
	if o := r.owning(path); o != nil {
		o.fallback.ServeCtx(c)
		return
	}
	r.noMatch(c, path, "")
}

// groupFallback is noMatch for a request under the group that owns
// prefix, called inside the group's middleware: it finds the match-form
// path again.
func (r *Router) groupFallback(c *riptide.Ctx, prefix string) {
	path := c.Path()
	if bytes.IndexByte(path, '%') >= 0 {
		buf := bufPool.Get().(*[]byte)
		defer bufPool.Put(buf)
		*buf = normalize((*buf)[:0], path)
		path = *buf
	}
	r.noMatch(c, path, prefix)
}

// find is lookup with the groups' ownership applied: under the prefix of
// a group that owns it, only a pattern inside that prefix may serve the
// path (see Router.Group). Where the request host's patterns offer only
// one outside the prefix, those without a host are asked too: within one
// table, a match outside the prefix means none inside matches (such two
// patterns would conflict), but across tables it does not.
func (r *Router) find(c *riptide.Ctx, path []byte, caps *captures) *route {
	rt := r.lookup(c, path, caps)
	if rt == nil || len(r.owners) == 0 {
		return rt
	}
	o := r.owning(path)
	if o == nil || rt.inside(o.prefix) {
		return rt
	}
	if r.hostTable(c.Host()) != &r.all {
		if rt := r.all.match(c.Method(), path, caps); rt != nil && rt.inside(o.prefix) {
			return rt
		}
	}
	return nil
}

// lookup finds the route for the request with the match-form path: the
// request host's patterns first, then those without a host.
func (r *Router) lookup(c *riptide.Ctx, path []byte, caps *captures) *route {
	t := r.hostTable(c.Host())
	if rt := t.match(c.Method(), path, caps); rt != nil || t == &r.all {
		return rt
	}
	return r.all.match(c.Method(), path, caps)
}

// exact reports whether rt matched the path exactly: not by a trailing
// multi wildcard that took a non-empty rest.
func exact(rt *route, caps *captures) bool {
	return !rt.multi || len(caps[len(rt.names)-1]) == 0
}

// cleanCaptures reports whether the captured values of a match are clean:
// static pattern text is clean, so a path that matched is clean unless a
// wildcard took a "." or ".." segment, or a multi wildcard took an
// unclean rest. Checking these alone spares a scan of the whole path.
func cleanCaptures(rt *route, caps *captures) bool {
	n := len(rt.names)
	if rt.multi {
		if !cleanSegments(caps[n-1]) {
			return false
		}
		n--
	}
	for _, v := range caps[:n] {
		if v[0] == '.' && (len(v) == 1 || len(v) == 2 && v[1] == '.') {
			return false
		}
	}
	return true
}

// hostTable returns the table of the request's host (port stripped), or
// the host-less table.
func (r *Router) hostTable(host []byte) *table {
	if len(r.hosts) == 0 {
		return &r.all
	}
	if i := bytes.LastIndexByte(host, ':'); i >= 0 && bytes.IndexByte(host[i:], ']') < 0 {
		host = host[:i]
	}
	for _, t := range r.hosts {
		if t.host == string(host) {
			return t
		}
	}
	return &r.all
}

// escapedCapture reports whether a value captured for rt holds a '%'. A
// plain loop: values are mostly single segments.
func escapedCapture(rt *route, caps *captures) bool {
	for _, v := range caps[:len(rt.names)] {
		for _, b := range v {
			if b == '%' {
				return true
			}
		}
	}
	return false
}

func hasSlashEscape(v []byte) bool { return bytes.Contains(v, []byte("%2F")) }
