// Package router routes requests to riptide native handlers by method,
// host and path, with the pattern syntax and precedence rules of
// net/http.ServeMux, at no allocation per request.
//
//	r := router.New()
//	r.HandleFunc("GET /users/{id}", func(c *riptide.Ctx) {
//		c.Write(c.PathValue("id"))
//	})
//	srv := &riptide.Server{Handler: r}
//
// A pattern is "[METHOD ][HOST]/[PATH]": "{name}" matches one path segment,
// "{name...}" the rest of the path, "{$}" only the end of a path that ends
// in a slash, and a pattern ending in a slash matches every path below it.
// Where several patterns match, the most specific wins; two patterns that
// match some request in common while neither is more specific conflict,
// and registering the second panics, as ServeMux does.
//
// Beyond ServeMux, the router answers OPTIONS for every path it routes
// (with Allow, unless an OPTIONS pattern matches), and supports groups with
// a path prefix and their own middleware, middleware around the whole
// router, and mounting any http.Handler on a subtree. A group owns its
// prefix: the router's own answers to requests under it (404, 405 and the
// automatic OPTIONS) run inside the group's middleware too, so that CORS
// answers preflights and authentication guards every path of the group. docs/router.md lists
// how it is checked against ServeMux and where it differs on purpose.
package router

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/riptide-http/riptide"
)

// Middleware wraps a handler, e.g. to run code before and after it. The
// middleware package holds the usual ones.
type Middleware = func(riptide.Handler) riptide.Handler

// Router is a riptide.Handler that dispatches to the handler of the most
// specific pattern matching the request.
//
// Register every route before the router serves its first request:
// registration is not safe concurrently with ServeCtx.
type Router struct {
	// NotFound answers requests no pattern matches (default: 404 with
	// Ctx.Error, a plain-text body as http.NotFound's unless
	// Server.ErrorHandler shapes it). Set it to shape every 404 of the
	// router, those under a group included, e.g. as JSON.
	NotFound riptide.Handler
	// MethodNotAllowed answers requests whose path matches a pattern for
	// other methods only; the Allow header is already set when it runs
	// (default: 405 with Ctx.Error). As NotFound, it serves the
	// groups too.
	MethodNotAllowed riptide.Handler

	all   table        // patterns without a host
	hosts []*table     // patterns with a host, one table each
	mw    []Middleware // router-wide, see Use
	// owners are the groups with middleware that own their prefix, see
	// Group.
	owners []*owner
	// serve is dispatch wrapped in mw; nil without middleware.
	serve riptide.Handler
}

// New returns an empty router.
func New() *Router { return &Router{} }

// Use adds middleware around the whole router: it also runs for requests
// that end in 404, 405, OPTIONS or a redirect. Middleware runs in the order
// added, the first outermost.
func (r *Router) Use(mw ...Middleware) {
	r.mw = append(r.mw, mw...)
	r.serve = riptide.HandlerFunc(r.dispatch)
	for i := len(r.mw) - 1; i >= 0; i-- {
		r.serve = r.mw[i](r.serve)
	}
}

// Handle registers h for pattern. It panics if the pattern is invalid, has
// more than riptide.MaxPathValues wildcards, or conflicts with one already
// registered.
func (r *Router) Handle(pattern string, h riptide.Handler) {
	if h == nil {
		panic("router: nil handler for " + pattern)
	}
	p, err := parsePattern(pattern)
	if err != nil {
		panic(fmt.Sprintf("router: parsing %q: %v", pattern, err))
	}
	t := r.table(p.host)
	for _, q := range t.patterns {
		if p.conflicts(q) {
			panic(conflictError(p, q))
		}
	}
	t.patterns = append(t.patterns, p)
	t.root(p.method).add(&route{pat: p, h: h, scope: p.scope()})
	t.noteMethod(p.method)
}

// HandleFunc registers f for pattern, as Handle.
func (r *Router) HandleFunc(pattern string, f func(*riptide.Ctx)) {
	r.Handle(pattern, riptide.HandlerFunc(f))
}

// Mount serves h, through riptide.FromHTTP, for every method and every
// path below prefix (a clean path such as "/legacy"), with prefix stripped
// from the request path as http.StripPrefix does: for an application
// written for the root ("/users" served at "/legacy/users"). h sees the
// request as any net/http handler does; the router's path values are not
// passed on.
//
// A handler that routes on the full path itself — a grpc.Server
// ("/pkg.Service/Method"), net/http/pprof ("/debug/pprof/..."), an
// http.ServeMux with its own full patterns — needs MountKeepPath instead.
func (r *Router) Mount(prefix string, h http.Handler) {
	prefix = strings.TrimSuffix(prefix, "/")
	r.Handle(prefix+"/", riptide.FromHTTP(http.StripPrefix(prefix, h)))
}

// MountKeepPath serves h, through riptide.FromHTTP, for every method and
// every path below prefix, as Mount does, but h sees the request path
// unchanged, prefix included: the rule for handlers that route on the
// full path, such as a grpc.Server mounted at its service name
// ("/grpc.health.v1.Health") or net/http/pprof's handlers in
// http.DefaultServeMux mounted at "/debug/pprof". It is
// r.Handle(prefix+"/", riptide.FromHTTP(h)) under a name that says so.
func (r *Router) MountKeepPath(prefix string, h http.Handler) {
	prefix = strings.TrimSuffix(prefix, "/")
	r.Handle(prefix+"/", riptide.FromHTTP(h))
}

// Group returns a group whose patterns are registered on r with prefix (a
// clean path such as "/api") before their path, and whose handlers are
// wrapped in mw (the first outermost).
//
// A group with a prefix and middleware owns its prefix: a request for the
// prefix or a path below it ("/api", "/api/x/y") that no pattern inside the
// prefix serves gets the router's answer (NotFound, MethodNotAllowed, or
// the automatic OPTIONS with Allow) through the group's middleware, so an
// authenticating group answers 401 rather than 404 to paths it does not
// route, and a CORS middleware answers preflights. A pattern is inside the
// prefix when every path it matches is: its path starts with the prefix's
// segments, literally ("GET /api/users/{id}", "/api/", also when
// registered on r rather than on the group). A pattern that is not — a
// catch-all "GET /" or "/{path...}", or "/{section}/x" — never serves a
// path the group owns, however it was registered, so static files on
// "GET /" do not bypass the group's authentication. The innermost
// (longest) prefix owns a path; of groups with the same prefix, the first
// created. Redirects to a clean path or to a trailing slash are not routed
// content and are answered outside any group (under the prefix, only to a
// path a pattern inside it serves). docs/router.md states the rule in
// full.
func (r *Router) Group(prefix string, mw ...Middleware) *Group {
	g := &Group{r: r, prefix: strings.TrimSuffix(prefix, "/"), mw: mw}
	r.own(g)
	return g
}

// owner is a group that owns its prefix: fallback is the router's own
// answer (groupFallback) wrapped in the group's middleware.
type owner struct {
	prefix   string // in match form (see normalize)
	fallback riptide.Handler
}

// own records that g owns its prefix, if it has one and middleware.
func (r *Router) own(g *Group) {
	if g.prefix == "" || len(g.mw) == 0 {
		return
	}
	prefix := string(normalize(nil, []byte(g.prefix)))
	for _, o := range r.owners {
		if o.prefix == prefix {
			return
		}
	}
	var h riptide.Handler = riptide.HandlerFunc(func(c *riptide.Ctx) { r.groupFallback(c, prefix) })
	for i := len(g.mw) - 1; i >= 0; i-- {
		h = g.mw[i](h)
	}
	r.owners = append(r.owners, &owner{prefix: prefix, fallback: h})
}

// owning returns the group that owns the match-form path: the longest
// prefix that is the path or ends where a segment of it does.
func (r *Router) owning(path []byte) *owner {
	var best *owner
	for _, o := range r.owners {
		if under(string(path), o.prefix) && (best == nil || len(o.prefix) > len(best.prefix)) {
			best = o
		}
	}
	return best
}

// under reports whether path is prefix or below it: prefix is a prefix of
// path that ends where a segment of path does. The string conversion of
// a []byte argument does not allocate where under is inlined.
func under(path, prefix string) bool {
	n := len(prefix)
	return len(path) >= n && path[:n] == prefix && (len(path) == n || path[n] == '/')
}

// Group is a set of routes sharing a path prefix and middleware.
type Group struct {
	r      *Router
	prefix string
	mw     []Middleware
}

// Handle registers h for pattern with the group's prefix inserted before
// the path ("GET /users" in group "/api" is "GET /api/users"), wrapped in
// the group's middleware. A pattern without a path registers the prefix
// itself: "GET" in group "/api" is "GET /api", and "" is "/api" for every
// method (a word before the missing path is a method).
func (g *Group) Handle(pattern string, h riptide.Handler) {
	if h == nil {
		panic("router: nil handler for " + pattern)
	}
	for i := len(g.mw) - 1; i >= 0; i-- {
		h = g.mw[i](h)
	}
	g.r.Handle(withPrefix(pattern, g.prefix), h)
}

// HandleFunc registers f for pattern, as Handle.
func (g *Group) HandleFunc(pattern string, f func(*riptide.Ctx)) {
	g.Handle(pattern, riptide.HandlerFunc(f))
}

// Group returns a nested group: its prefix follows g's, its middleware
// runs inside g's. It owns its prefix as Router.Group describes.
func (g *Group) Group(prefix string, mw ...Middleware) *Group {
	all := append(append([]Middleware(nil), g.mw...), mw...)
	n := &Group{r: g.r, prefix: g.prefix + strings.TrimSuffix(prefix, "/"), mw: all}
	g.r.own(n)
	return n
}

// withPrefix inserts prefix at the start of pattern's path, after its
// method and host; a pattern without a path gets prefix as its path.
func withPrefix(pattern, prefix string) string {
	i := strings.IndexByte(pattern, '/')
	switch {
	case i >= 0:
		return pattern[:i] + prefix + pattern[i:]
	case pattern == "":
		return prefix
	case strings.IndexByte(pattern, ' ') < 0:
		return pattern + " " + prefix // a method alone
	}
	return pattern + prefix // "METHOD HOST"
}
