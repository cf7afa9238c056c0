package router

import (
	"testing"

	"github.com/riptide-http/riptide"
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
