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
