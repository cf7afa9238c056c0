package router

import "fmt"

// How the sets of requests two patterns match relate (net/http.ServeMux's
// precedence rules): a pattern that is more specific than another wins
// where both match; two patterns that match some request in common while
// neither is more specific conflict, and registering the second panics.
type relation int

const (
	equivalent   relation = iota // the same requests
	moreGeneral                  // every request of the other, and more
	moreSpecific                 // a strict subset of the other's requests
	disjoint                     // no request in common
	overlaps                     // some in common, neither contains the other
)

// conflicts reports whether p and q may not both be registered.
func (p *pattern) conflicts(q *pattern) bool {
	if p.host != q.host {
		return false // a host pattern always beats a hostless one
	}
	m := compareMethods(p.method, q.method)
	if m == disjoint {
		return false
	}
	r := combine(m, comparePaths(p.segs, q.segs))
	return r == equivalent || r == overlaps
}

// compareMethods relates method sets: "" is every method and GET also
// serves HEAD.
func compareMethods(a, b string) relation {
	switch {
	case a == b:
		return equivalent
	case a == "" || a == "GET" && b == "HEAD":
		return moreGeneral
	case b == "" || b == "GET" && a == "HEAD":
		return moreSpecific
	}
	return disjoint
}

// comparePaths relates two path patterns segment by segment; a trailing
// multi wildcard also covers any further segments of the other.
func comparePaths(a, b []segment) relation {
	lastMulti := func(s []segment) bool { return len(s) > 0 && s[len(s)-1].multi }
	if len(a) != len(b) && !lastMulti(a) && !lastMulti(b) {
		return disjoint
	}
	r := equivalent
	n := min(len(a), len(b))
	for i := 0; i < n && r != disjoint; i++ {
		r = combine(r, compareSegments(a[i], b[i]))
	}
	switch {
	case r == disjoint || len(a) == len(b):
		return r
	case len(a) < len(b) && lastMulti(a):
		return combine(r, moreGeneral)
	case len(b) < len(a) && lastMulti(b):
		return combine(r, moreSpecific)
	}
	return disjoint
}

// compareSegments relates two segments. A single wildcard never matches
// the empty final segment that {$} stands for.
func compareSegments(a, b segment) relation {
	switch {
	case a.multi && b.multi, a.wild && b.wild && !a.multi && !b.multi:
		return equivalent
	case a.multi:
		return moreGeneral
	case b.multi:
		return moreSpecific
	case a.wild:
		if b.s == "/" {
			return disjoint
		}
		return moreGeneral
	case b.wild:
		if a.s == "/" {
			return disjoint
		}
		return moreSpecific
	case a.s == b.s:
		return equivalent
	}
	return disjoint
}

// combine is the relation of two patterns from the relations of two of
// their parts (method and path, or successive segments).
func combine(r1, r2 relation) relation {
	switch {
	case r1 == equivalent:
		return r2
	case r1 == disjoint || r2 == disjoint:
		return disjoint
	case r1 == overlaps || r2 == overlaps:
		return overlaps
	case r2 == equivalent || r1 == r2:
		return r1
	}
	return overlaps // one more general, the other more specific
}

// conflictError describes why q cannot be registered next to p.
func conflictError(q, p *pattern) string {
	return fmt.Sprintf("router: pattern %q (registered) conflicts with %q: they match some requests in common and neither is more specific", p.str, q.str)
}
