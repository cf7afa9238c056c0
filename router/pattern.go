package router

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
)

// A pattern is a parsed route pattern: "[METHOD ][HOST]/[PATH]", with the
// syntax and meaning of net/http.ServeMux patterns.
type pattern struct {
	str    string // as registered
	method string // "" matches every method
	host   string // "" matches every host
	segs   []segment
}

// segment is one path segment of a pattern. A literal segment holds its
// text in match form (see normalize); "/" stands for a trailing {$}.
type segment struct {
	s     string // literal text, or the wildcard's name ("" for the implicit one of a trailing slash)
	wild  bool   // {name} or {name...}
	multi bool   // {name...}, or the implicit wildcard of a trailing slash
}

func (p *pattern) String() string { return p.str }

// scope returns the literal segments at the start of p's path, up to its
// first wildcard or {$}, as a path in match form ("/api/users" for
// "GET /api/users/{id}" and for "/api/users/", "" for "/" and "/{x}"):
// every path p matches is scope or below it.
func (p *pattern) scope() string {
	var b strings.Builder
	for _, s := range p.segs {
		if s.wild || s.s == "/" {
			break
		}
		b.WriteByte('/')
		b.WriteString(s.s)
	}
	return b.String()
}

// parsePattern parses s as net/http.ServeMux does, and also refuses a path
// that is not clean (it could never match: the router redirects such paths).
func parsePattern(s string) (*pattern, error) {
	if s == "" {
		return nil, errors.New("empty pattern")
	}
	p := &pattern{str: s}
	rest := s
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		p.method, rest = s[:i], strings.TrimLeft(s[i+1:], " \t")
		if !h1.ValidHeaderName(p.method) { // a method is a token
			return nil, fmt.Errorf("invalid method %q", p.method)
		}
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return nil, errors.New("host/path missing /")
	}
	p.host, rest = rest[:i], rest[i:]
	if strings.IndexByte(p.host, '{') >= 0 {
		return nil, errors.New("host contains '{' (missing initial '/'?)")
	}
	if !isClean(rest) {
		return nil, errors.New("unclean path can never match")
	}
	segs, err := parseSegments(rest)
	if err != nil {
		return nil, err
	}
	p.segs = segs
	return p, nil
}

// parseSegments splits a clean path pattern ("/a/{b}/{c...}") into segments.
func parseSegments(rest string) ([]segment, error) {
	var segs []segment
	seen := map[string]bool{}
	for len(rest) > 0 {
		rest = rest[1:]
		if rest == "" { // trailing slash: an anonymous multi wildcard
			segs = append(segs, segment{wild: true, multi: true})
			break
		}
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		if !strings.Contains(seg, "{") {
			segs = append(segs, segment{s: string(normalize(nil, []byte(seg)))})
			continue
		}
		w, err := parseWildcard(seg, rest == "", seen)
		if err != nil {
			return nil, err
		}
		segs = append(segs, w)
	}
	if n := wildcards(segs); n > riptide.MaxPathValues {
		return nil, fmt.Errorf("%d wildcards, more than riptide.MaxPathValues (%d)", n, riptide.MaxPathValues)
	}
	return segs, nil
}

func parseWildcard(seg string, last bool, seen map[string]bool) (segment, error) {
	if seg[0] != '{' {
		return segment{}, errors.New("bad wildcard segment (must start with '{')")
	}
	if seg[len(seg)-1] != '}' {
		return segment{}, errors.New("bad wildcard segment (must end with '}')")
	}
	name := seg[1 : len(seg)-1]
	if name == "$" {
		if !last {
			return segment{}, errors.New("{$} not at end")
		}
		return segment{s: "/"}, nil
	}
	name, multi := strings.CutSuffix(name, "...")
	if multi && !last {
		return segment{}, errors.New("{...} wildcard not at end")
	}
	if name == "" {
		return segment{}, errors.New("empty wildcard")
	}
	if !isIdent(name) {
		return segment{}, fmt.Errorf("bad wildcard name %q", name)
	}
	if seen[name] {
		return segment{}, fmt.Errorf("duplicate wildcard name %q", name)
	}
	seen[name] = true
	return segment{s: name, wild: true, multi: multi}, nil
}

// wildcards counts the named wildcards of segs.
func wildcards(segs []segment) int {
	n := 0
	for _, s := range segs {
		if s.wild && s.s != "" {
			n++
		}
	}
	return n
}

func isIdent(s string) bool {
	for i, c := range s {
		if !unicode.IsLetter(c) && c != '_' && (i == 0 || !unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}
