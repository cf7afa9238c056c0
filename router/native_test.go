package router

import (
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// TestPattern (issue 28, item 4): Ctx.Pattern names the route that
// matched, as registered (with a group's prefix), like net/http's
// Request.Pattern; "" for the router's own answers.
func TestPattern(t *testing.T) {
	r := New()
	pat := func(c *riptide.Ctx) { c.WriteString("[" + c.Pattern() + "]") }
	r.HandleFunc("GET /users/{id}", pat)
	r.HandleFunc("/files/", pat)
	r.Group("/api").HandleFunc("POST /items/{id}", pat)
	r.NotFound = riptide.HandlerFunc(pat)
	rc := dial(t, serve(t, r))
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/users/7", "[GET /users/{id}]"},
		{"GET", "/files/a/b", "[/files/]"},
		{"POST", "/api/items/3", "[POST /api/items/{id}]"},
		{"GET", "/nowhere", "[]"},
	} {
		if _, body := rc.Do(tc.method, tc.target, "x"); body != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.target, body, tc.want)
		}
	}
}

// guard is middleware that answers 401 unless the request carries
// "X-Auth: ok", standing for BasicAuth.
func guard(next riptide.Handler) riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		if string(c.Header("X-Auth")) != "ok" {
			c.SetStatus(401)
			c.WriteString("who are you?")
			return
		}
		next.ServeCtx(c)
	})
}

// preflight is middleware that answers CORS preflights itself, standing
// for middleware.CORS.
func preflight(next riptide.Handler) riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetHeader("Access-Control-Allow-Origin", "*")
		if string(c.Method()) == "OPTIONS" && c.Header("Access-Control-Request-Method") != nil {
			c.SetStatus(204)
			return
		}
		next.ServeCtx(c)
	})
}

// TestGroupOwnsPrefix (issue 28, items 2 and 3): the router's 404, 405 and
// automatic OPTIONS under a group's prefix run inside the group's
// middleware, the innermost group's for nested ones; a group registers its
// bare prefix with a pattern that has no path.
func TestGroupOwnsPrefix(t *testing.T) {
	r := New()
	admin := r.Group("/admin", guard)
	admin.HandleFunc("GET", func(c *riptide.Ctx) { c.WriteString("admin home") })
	admin.HandleFunc("GET /users", func(c *riptide.Ctx) { c.WriteString("users") })
	api := r.Group("/api", preflight)
	api.HandleFunc("GET /items", func(c *riptide.Ctx) { c.WriteString("items") })
	api.Group("/private", guard).HandleFunc("GET /x", func(c *riptide.Ctx) { c.WriteString("x") })
	r.HandleFunc("GET /public", func(c *riptide.Ctx) { c.WriteString("public") })
	addr := serve(t, r)
	for _, tc := range []struct {
		rule, req string
		code      int
		body      string
		acao      string
	}{
		{"unmatched path under an authenticating group", "GET /admin/other HTTP/1.1\r\nHost: x\r\n\r\n", 401, "who are you?", ""},
		{"the same, authenticated", "GET /admin/other HTTP/1.1\r\nHost: x\r\nX-Auth: ok\r\n\r\n", 404, "404 page not found\n", ""},
		{"bare prefix", "GET /admin HTTP/1.1\r\nHost: x\r\n\r\n", 401, "who are you?", ""},
		{"bare prefix, authenticated", "GET /admin HTTP/1.1\r\nHost: x\r\nX-Auth: ok\r\n\r\n", 200, "admin home", ""},
		{"405 under the group", "POST /admin/users HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 401, "who are you?", ""},
		{"405, authenticated", "POST /admin/users HTTP/1.1\r\nHost: x\r\nX-Auth: ok\r\nContent-Length: 0\r\n\r\n", 405, "Method Not Allowed\n", ""},
		{"preflight on a group route", "OPTIONS /api/items HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n\r\n", 204, "", "*"},
		{"plain OPTIONS on a group route", "OPTIONS /api/items HTTP/1.1\r\nHost: x\r\n\r\n", 204, "", "*"},
		{"404 under the CORS group", "GET /api/nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404, "404 page not found\n", "*"},
		{"nested group: the inner one owns its prefix", "GET /api/private/y HTTP/1.1\r\nHost: x\r\n\r\n", 401, "who are you?", "*"},
		{"outside any group", "GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n", 404, "404 page not found\n", ""},
		{"a prefix is whole segments", "GET /administrator HTTP/1.1\r\nHost: x\r\n\r\n", 404, "404 page not found\n", ""},
	} {
		resp, body := loopback.DialConn(t, addr).Send(tc.req)
		if resp.StatusCode != tc.code || body != tc.body || resp.Header.Get("Access-Control-Allow-Origin") != tc.acao {
			t.Errorf("%s: %d %q ACAO %q, want %d %q %q", tc.rule, resp.StatusCode, body,
				resp.Header.Get("Access-Control-Allow-Origin"), tc.code, tc.body, tc.acao)
		}
	}
}

// TestGroupOwnsPrefixOverCatchAll (examples finding 1): a group owns its
// prefix against patterns that are not inside it — a catch-all "GET /"
// (static files), "/{path...}", a wildcard first segment, a host's
// catch-all — while a pattern inside the prefix registered outside the
// group ("GET /admin/public") still wins, as ServeMux's precedence says.
// Nested groups own theirs against the outer group's wildcard patterns.
func TestGroupOwnsPrefixOverCatchAll(t *testing.T) {
	text := func(s string) func(*riptide.Ctx) {
		return func(c *riptide.Ctx) { c.WriteString(s) }
	}
	r := New()
	r.HandleFunc("GET /", text("static"))
	r.HandleFunc("GET /admin/public", text("public"))
	r.HandleFunc("GET example.com/", text("host static"))
	r.HandleFunc("GET example.com/admin/special", text("host special"))
	admin := r.Group("/admin", guard)
	admin.HandleFunc("GET /users", text("users"))
	admin.HandleFunc("GET /files/{path...}", func(c *riptide.Ctx) { c.WriteString("file " + c.PathValueString("path")) })
	admin.HandleFunc("GET /u/{id}", func(c *riptide.Ctx) { c.WriteString("user " + c.PathValueString("id")) })
	api := r.Group("/api", preflight)
	api.HandleFunc("GET /{rest...}", text("api wildcard"))
	api.Group("/private", guard).HandleFunc("GET /x", text("private x"))

	any := New() // a catch-all for every method, and a CORS group
	any.HandleFunc("/{path...}", text("any"))
	any.HandleFunc("GET /{section}/feed", text("feed"))
	cors := any.Group("/admin", preflight, guard)
	cors.HandleFunc("GET /users", text("users"))

	addr, anyAddr := serve(t, r), serve(t, any)
	const auth = "X-Auth: ok\r\n"
	for _, tc := range []struct {
		rule, addr, method, target, host, hdr string
		code                                  int
		body, allow                           string
	}{
		{"catch-all: unmatched path under the group asks for credentials", addr, "GET", "/admin/x", "x", "", 401, "who are you?", ""},
		{"catch-all: authenticated, the group's 404", addr, "GET", "/admin/x", "x", auth, 404, "404 page not found\n", ""},
		{"catch-all: the bare prefix", addr, "GET", "/admin", "x", "", 401, "who are you?", ""},
		{"catch-all: escaped path under the group", addr, "GET", "/%61dmin/x", "x", "", 401, "who are you?", ""},
		{"catch-all: a wrong method on a group route", addr, "DELETE", "/admin/users", "x", auth, 405, "Method Not Allowed\n", "GET, HEAD, OPTIONS"},
		{"catch-all still serves outside the group", addr, "GET", "/index.html", "x", "", 200, "static", ""},
		{"catch-all: a prefix is whole segments", addr, "GET", "/administrator", "x", "", 200, "static", ""},
		{"wildcard first segment outside the group does not serve it", anyAddr, "GET", "/admin/feed", "x", "", 401, "who are you?", ""},
		{"wildcard first segment elsewhere", anyAddr, "GET", "/news/feed", "x", "", 200, "feed", ""},
		{"more specific outside the group wins", addr, "GET", "/admin/public", "x", "", 200, "public", ""},
		{"group route", addr, "GET", "/admin/users", "x", auth, 200, "users", ""},
		{"group route needs credentials", addr, "GET", "/admin/users", "x", "", 401, "who are you?", ""},
		{"multi wildcard in the group", addr, "GET", "/admin/files/a/b.txt", "x", auth, 200, "file a/b.txt", ""},
		{"single wildcard in the group", addr, "GET", "/admin/u/7", "x", auth, 200, "user 7", ""},
		{"single wildcard in the group: one segment only", addr, "GET", "/admin/u/7/more", "x", auth, 404, "404 page not found\n", ""},
		{"host catch-all does not serve the group's prefix", addr, "GET", "/admin/x", "example.com", "", 401, "who are you?", ""},
		{"host catch-all: the group's route", addr, "GET", "/admin/users", "example.com", auth, 200, "users", ""},
		{"host pattern inside the prefix wins", addr, "GET", "/admin/special", "example.com", "", 200, "host special", ""},
		{"host catch-all elsewhere", addr, "GET", "/page", "example.com", "", 200, "host static", ""},
		{"nested: the outer group's wildcard serves the outer prefix", addr, "GET", "/api/anything", "x", "", 200, "api wildcard", ""},
		{"nested: not the inner group's prefix", addr, "GET", "/api/private/y", "x", "", 401, "who are you?", ""},
		{"nested: the inner group's 404", addr, "GET", "/api/private/y", "x", auth, 404, "404 page not found\n", ""},
		{"nested: the inner group's route", addr, "GET", "/api/private/x", "x", auth, 200, "private x", ""},
		{"any-method catch-all: preflight answered by the group", anyAddr, "OPTIONS", "/admin/users", "x", "Origin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n", 204, "", ""},
		{"any-method catch-all: OPTIONS lists the group's methods only", anyAddr, "OPTIONS", "/admin/users", "x", auth, 204, "", "GET, HEAD, OPTIONS"},
		{"any-method catch-all: 405 lists the group's methods only", anyAddr, "POST", "/admin/users", "x", auth, 405, "Method Not Allowed\n", "GET, HEAD, OPTIONS"},
		{"any-method catch-all: 404 under the group", anyAddr, "PUT", "/admin/none", "x", auth, 404, "404 page not found\n", ""},
		{"any-method catch-all elsewhere", anyAddr, "PUT", "/elsewhere", "x", "", 200, "any", ""},
	} {
		req := tc.method + " " + tc.target + " HTTP/1.1\r\nHost: " + tc.host + "\r\n" + tc.hdr
		if tc.method == "POST" || tc.method == "PUT" {
			req += "Content-Length: 0\r\n"
		}
		resp, body := loopback.DialConn(t, tc.addr).Send(req + "\r\n")
		if resp.StatusCode != tc.code || body != tc.body || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s: %s %s: %d %q Allow %q, want %d %q %q", tc.rule, tc.method, tc.target,
				resp.StatusCode, body, resp.Header.Get("Allow"), tc.code, tc.body, tc.allow)
		}
	}
}
