package router

import (
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
)

// TestZeroAllocs routes requests over a real loopback connection and
// counts every allocation in the process (server, router and the
// allocation-free client) per request.
func TestZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	r := New()
	ok := func(c *riptide.Ctx) { c.WriteString("ok") }
	r.HandleFunc("GET /static/path/here", ok)
	r.HandleFunc("GET /repos/{owner}/{repo}", func(c *riptide.Ctx) {
		c.Write(c.PathValue("owner"))
		c.Write(c.PathValue("repo"))
	})
	r.HandleFunc("GET /files/{path...}", func(c *riptide.Ctx) { c.Write(c.PathValue("path")) })
	r.HandleFunc("GET /repos/{owner}/{repo}/issues", ok)
	r.HandleFunc("POST /repos/{owner}/{repo}", ok)
	r.HandleFunc("GET /pattern/{x}", func(c *riptide.Ctx) { c.WriteString(c.Pattern()) })
	addr := serve(t, r)
	for _, tc := range []struct{ name, target, body string }{
		{"static", "/static/path/here", "ok"},
		{"2 parameters", "/repos/golang/go", "golanggo"},
		{"catch-all", "/files/css/site/main.css", "css/site/main.css"},
		{"escaped path", "/files/a%20b%2Fc", "a b/c"},
		{"HEAD by GET", "/repos/golang/go", ""},
		{"Pattern", "/pattern/1", "GET /pattern/{x}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := "GET"
			if tc.name == "HEAD by GET" {
				method = "HEAD"
			}
			c := loopback.Dial(t, addr, method+" "+tc.target+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
			if got := string(c.Response()); len(got) < len(tc.body) || got[len(got)-len(tc.body):] != tc.body || got[:12] != "HTTP/1.1 200" {
				t.Fatalf("response %q, want 200 with body %q", got, tc.body)
			}
			if a := testing.AllocsPerRun(2000, c.RoundTrip); a != 0 {
				t.Errorf("%v allocs per request, want 0", a)
			}
		})
	}
}

// TestGroupZeroAllocs: group ownership (a catch-all beside a group, a
// host's catch-all, the group's own 404) costs no allocation either.
func TestGroupZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	r := New()
	ok := func(c *riptide.Ctx) { c.WriteString("ok") }
	pass := func(next riptide.Handler) riptide.Handler { return next }
	r.HandleFunc("GET /", ok)
	r.HandleFunc("GET h.example/", ok)
	r.HandleFunc("GET /admin/public", ok)
	admin := r.Group("/admin", pass)
	admin.HandleFunc("GET /users/{id}", func(c *riptide.Ctx) { c.Write(c.PathValue("id")) })
	admin.Group("/deep", pass).HandleFunc("GET /{rest...}", func(c *riptide.Ctx) { c.Write(c.PathValue("rest")) })
	addr := serve(t, r)
	for _, tc := range []struct{ name, host, target, want string }{
		{"catch-all outside the group", "x", "/page", "HTTP/1.1 200"},
		{"group route beside a catch-all", "x", "/admin/users/7", "HTTP/1.1 200"},
		{"more specific outside the group", "x", "/admin/public", "HTTP/1.1 200"},
		{"nested group wildcard", "x", "/admin/deep/a/b", "HTTP/1.1 200"},
		{"group route beside a host's catch-all", "h.example", "/admin/users/7", "HTTP/1.1 200"},
		{"the group's 404", "x", "/admin/none", "HTTP/1.1 404"},
		{"the group's 404 beside a host's catch-all", "h.example", "/admin/none", "HTTP/1.1 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loopback.Dial(t, addr, "GET "+tc.target+" HTTP/1.1\r\nHost: "+tc.host+"\r\n\r\n")
			if got := string(c.Response()); len(got) < 12 || got[:12] != tc.want {
				t.Fatalf("response %q, want %s", got, tc.want)
			}
			if a := testing.AllocsPerRun(2000, c.RoundTrip); a != 0 {
				t.Errorf("%v allocs per request, want 0", a)
			}
		})
	}
}
