package router

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"github.com/riptide-http/riptide"
)

// node is a node of a radix tree over the bytes of a path. Static text
// is compressed into prefixes that may span segments ("/repos/"); a
// wildcard always starts right after a '/', so it hangs on the node whose
// text ends with that '/'.
//
// Lookup tries, at each node, the static child, then the {name} child, then
// the {name...} wildcard, and backtracks on failure: the order
// net/http.ServeMux matches segments in (literal, wildcard, multi). With
// conflicting patterns refused at registration, the first match is the
// most specific pattern.
type node struct {
	prefix   string  // static text matched on entering this node
	indices  string  // first byte of each static child, for a quick pick
	children []*node // static children
	param    *node   // {name}: one non-empty segment, then this node
	multi    *route  // {name...} or a trailing slash: the rest of the path
	route    *route  // a pattern that ends exactly here
	// count is the number of static additions through this node, so that
	// children with more routes below them are tried first (httprouter's
	// priority order: a lookup scans the busiest branches first).
	count int
}

// route is a registered pattern with its handler.
type route struct {
	pat   *pattern
	h     riptide.Handler
	names []string // one per captured value, in order; "" is not set
	// multi: the pattern ends in a multi wildcard (named or a trailing
	// slash), whose capture is the last.
	multi bool
	// scope is the literal start of the pattern's path (see
	// pattern.scope): every path the pattern matches is scope or below.
	scope string
}

// inside reports whether every path r matches is prefix or below it: r
// may serve a path that a group with that prefix owns.
func (r *route) inside(prefix string) bool { return under(r.scope, prefix) }

// maxCaptures bounds the values one match captures: the named wildcards
// and the anonymous multi wildcard of a trailing slash.
const maxCaptures = riptide.MaxPathValues + 1

// captures holds the values captured while matching, by position.
type captures [maxCaptures][]byte

// add inserts r's pattern below n (the root of one method's tree).
func (n *node) add(r *route) {
	var text strings.Builder
	for _, s := range r.pat.segs {
		text.WriteByte('/')
		switch {
		case s.multi:
			n = n.static(text.String())
			n.multi = r
			r.names = append(r.names, s.s)
			r.multi = true
			return
		case s.wild:
			n = n.static(text.String())
			text.Reset()
			if n.param == nil {
				n.param = &node{}
			}
			n = n.param
			r.names = append(r.names, s.s)
		case s.s != "/": // "/" is {$}: the slash alone
			text.WriteString(s.s)
		}
	}
	n = n.static(text.String())
	n.route = r
}

// static returns the node reached from n by the text s, creating and
// splitting nodes as needed.
func (n *node) static(s string) *node {
	for s != "" {
		i := strings.IndexByte(n.indices, s[0])
		if i < 0 {
			c := &node{prefix: s, count: 1}
			n.indices += s[:1]
			n.children = append(n.children, c)
			n.promote(len(n.children) - 1)
			return c
		}
		c := n.children[i]
		l := commonPrefix(c.prefix, s)
		if l < len(c.prefix) {
			tail := *c
			tail.prefix = c.prefix[l:]
			*c = node{prefix: c.prefix[:l], indices: tail.prefix[:1], children: []*node{&tail}, count: tail.count}
		}
		c.count++
		n.promote(i)
		n, s = c, s[l:]
	}
	return n
}

// promote moves child i ahead of the children with a lower count.
func (n *node) promote(i int) {
	idx := []byte(n.indices)
	for ; i > 0 && n.children[i-1].count < n.children[i].count; i-- {
		n.children[i-1], n.children[i] = n.children[i], n.children[i-1]
		idx[i-1], idx[i] = idx[i], idx[i-1]
	}
	n.indices = string(idx)
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// match finds the route for path, the rest of the request path after n's
// prefix, capturing wildcard values from index k of caps on. It loops down
// the tree where a node offers one way on, and recurses only where it may
// have to come back and try the next (a static child with a wildcard
// beside it).
func (n *node) match(path []byte, caps *captures, k int) *route {
	for {
		if len(path) == 0 {
			if n.route != nil {
				return n.route
			}
			if n.multi != nil {
				caps[k] = path
			}
			return n.multi
		}
		if c := n.child(path[0]); c != nil && hasPrefix(path, c.prefix) {
			if n.param == nil && n.multi == nil {
				n, path = c, path[len(c.prefix):]
				continue
			}
			if r := c.match(path[len(c.prefix):], caps, k); r != nil {
				return r
			}
		}
		if n.param != nil {
			end := segmentEnd(path)
			if end > 0 {
				// On a dead end below, the caller that backtracks
				// rewrites caps[k] on its own way down.
				caps[k] = path[:end]
				if n.multi == nil {
					n, path, k = n.param, path[end:], k+1
					continue
				}
				if r := n.param.match(path[end:], caps, k+1); r != nil {
					caps[k] = path[:end]
					return r
				}
			}
		}
		if n.multi != nil {
			caps[k] = path
		}
		return n.multi
	}
}

// child returns the static child whose prefix starts with b, or nil. A
// plain loop: the list is short, and shorter than a call to IndexByte.
func (n *node) child(b byte) *node {
	for i := 0; i < len(n.indices); i++ {
		if n.indices[i] == b {
			return n.children[i]
		}
	}
	return nil
}

// hasPrefix reports whether path starts with prefix, whose first byte is
// known to match. A loop: prefixes are short, shorter than a call to
// memequal pays for.
func hasPrefix(path []byte, prefix string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i := 1; i < len(prefix); i++ {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// segmentEnd returns the length of path's first segment: the index of its
// first '/', or len(path). Eight bytes at a time while a word remains (the
// lowest byte that the zero-byte test flags is exact), then byte by byte.
func segmentEnd(path []byte) int {
	const (
		ones  = 0x0101010101010101
		high  = 0x8080808080808080
		slash = '/' * ones
	)
	end := 0
	for ; end+8 <= len(path); end += 8 {
		w := binary.LittleEndian.Uint64(path[end:]) ^ slash
		if z := (w - ones) &^ w & high; z != 0 {
			return end + bits.TrailingZeros64(z)/8
		}
	}
	for end < len(path) && path[end] != '/' {
		end++
	}
	return end
}
