package router

import (
	"slices"

	"github.com/riptide-http/riptide"
)

// table holds the patterns of one host ("" for patterns without a host):
// a tree per method, tried as ServeMux does (the request's method, then
// GET for HEAD, then the patterns without a method).
type table struct {
	host     string
	patterns []*pattern
	methods  []methodTree
	any      *node // patterns without a method
	get      *node // the GET tree, also in methods: the common case first
	// allow lists, sorted, the methods an Allow header may name: those
	// with patterns, HEAD when GET has some, and OPTIONS.
	allow []string
}

type methodTree struct {
	method string
	root   *node
}

// table returns the table for host, creating it.
func (r *Router) table(host string) *table {
	if host == "" {
		return &r.all
	}
	for _, t := range r.hosts {
		if t.host == host {
			return t
		}
	}
	t := &table{host: host}
	r.hosts = append(r.hosts, t)
	return t
}

// root returns the tree for method ("" for any), creating it.
func (t *table) root(method string) *node {
	if method == "" {
		if t.any == nil {
			t.any = &node{}
		}
		return t.any
	}
	if n := t.tree(method); n != nil {
		return n
	}
	n := &node{}
	t.methods = append(t.methods, methodTree{method, n})
	if method == "GET" {
		t.get = n
	}
	return n
}

// tree returns the tree for method, or nil.
func (t *table) tree(method string) *node {
	for i := range t.methods {
		if t.methods[i].method == method {
			return t.methods[i].root
		}
	}
	return nil
}

func (t *table) treeBytes(method []byte) *node {
	if len(method) == 3 && method[0] == 'G' && method[1] == 'E' && method[2] == 'T' {
		return t.get
	}
	for i := range t.methods {
		if t.methods[i].method == string(method) {
			return t.methods[i].root
		}
	}
	return nil
}

// noteMethod records method for Allow headers.
func (t *table) noteMethod(method string) {
	add := func(m string) {
		if m != "" && !slices.Contains(t.allow, m) {
			t.allow = append(t.allow, m)
		}
	}
	add(method)
	if method == "GET" {
		add("HEAD")
	}
	add("OPTIONS")
	slices.Sort(t.allow)
}

// match finds the route for method and the match-form path.
func (t *table) match(method, path []byte, caps *captures) *route {
	if n := t.treeBytes(method); n != nil {
		if r := n.match(path, caps, 0); r != nil {
			return r
		}
	}
	if string(method) == "HEAD" {
		if n := t.tree("GET"); n != nil {
			if r := n.match(path, caps, 0); r != nil {
				return r
			}
		}
	}
	if t.any != nil {
		return t.any.match(path, caps, 0)
	}
	return nil
}

// allows reports whether a request with method m would match path, for the
// Allow header (OPTIONS always does: the router answers it); where prefix
// is not "", by a pattern inside it.
func (t *table) allows(m string, path []byte, prefix string) bool {
	if m == "OPTIONS" {
		return true
	}
	var caps captures
	if n := t.tree(m); n != nil {
		if rt := n.match(path, &caps, 0); rt != nil && (prefix == "" || rt.inside(prefix)) {
			return true
		}
	}
	if m == "HEAD" { // served by GET patterns too
		if n := t.tree("GET"); n != nil {
			rt := n.match(path, &caps, 0)
			return rt != nil && (prefix == "" || rt.inside(prefix))
		}
	}
	return false
}

// set stores r's pattern (Ctx.Pattern) and the captured values of r in c,
// decoding %2F in them when the path was in match form.
func (r *route) set(c *riptide.Ctx, caps *captures, buf *[]byte) {
	c.SetPattern(r.pat.str)
	for i, name := range r.names {
		if name == "" {
			continue
		}
		v := caps[i]
		if buf != nil && hasSlashEscape(v) {
			start := len(*buf)
			*buf = unescapeSlashes(*buf, v)
			v = (*buf)[start:]
		}
		c.SetPathValue(name, v)
	}
}
