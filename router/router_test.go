package router

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
)

// name answers with the pattern's label and its path values.
func name(label string, names ...string) riptide.HandlerFunc {
	return func(c *riptide.Ctx) {
		c.WriteString(label)
		for _, n := range names {
			c.WriteString(" " + n + "=" + string(c.PathValue(n)))
		}
	}
}

func TestRouting(t *testing.T) {
	r := New()
	r.Handle("GET /users/new", name("new"))
	r.Handle("GET /users/{id}", name("user", "id"))
	r.Handle("GET /users/{id}/posts/{post}", name("post", "id", "post"))
	r.Handle("/files/{path...}", name("files", "path"))
	r.Handle("/x", name("any-x"))
	r.Handle("GET /x", name("get-x"))
	r.Handle("api.example.com/x", name("host-x"))
	r.Handle("/dir/", name("dir"))
	r.Handle("/exact/{$}", name("exact"))
	r.Handle("GET /{$}", name("root"))
	r.Handle("PUT /only-put", name("put"))
	r.Handle("OPTIONS /opt", name("own-options"))
	r.Handle("GET /opt", name("opt"))
	rc := dial(t, serve(t, r))

	for _, tc := range []struct {
		rule, method, target, host string
		code                       int
		body, location, allow      string
	}{
		{"a literal segment beats a wildcard", "GET", "/users/new", "", 200, "new", "", ""},
		{"a wildcard matches one segment", "GET", "/users/42", "", 200, "user id=42", "", ""},
		{"two wildcards", "GET", "/users/42/posts/7", "", 200, "post id=42 post=7", "", ""},
		{"a wildcard value is unescaped", "GET", "/users/a%20b%2Fc", "", 200, "user id=a b/c", "", ""},
		{"escaped dots are not dot segments", "GET", "/users/%2e%2E/posts/7", "", 200, "post id=.. post=7", "", ""},
		{"a multi wildcard takes the rest", "GET", "/files/a/b/c.txt", "", 200, "files path=a/b/c.txt", "", ""},
		{"a multi wildcard may be empty", "POST", "/files/", "", 200, "files path=", "", ""},
		{"a method beats no method", "GET", "/x", "", 200, "get-x", "", ""},
		{"no method matches the others", "DELETE", "/x", "", 200, "any-x", "", ""},
		{"a host beats no host", "GET", "/x", "api.example.com", 200, "host-x", "", ""},
		{"the port is ignored for hosts", "GET", "/x", "api.example.com:8443", 200, "host-x", "", ""},
		{"a trailing slash matches the subtree", "GET", "/dir/a/b", "", 200, "dir", "", ""},
		{"{$} matches the slash only", "GET", "/exact/", "", 200, "exact", "", ""},
		{"{$} does not match below", "GET", "/exact/a", "", 404, "404 page not found\n", "", ""},
		{"GET /{$} is the root only", "GET", "/", "", 200, "root", "", ""},
		{"HEAD is served by GET", "HEAD", "/users/42", "", 200, "", "", ""},
		{"redirect to the subtree", "GET", "/dir?q=1", "", 307, "", "/dir/?q=1", ""},
		{"redirect to {$}", "GET", "/exact", "", 307, "", "/exact/", ""},
		{"redirect an unclean path", "GET", "/users/../users/new", "", 307, "", "/users/new", ""},
		{"redirect a double slash", "GET", "//users//7?a=b", "", 307, "", "/users/7?a=b", ""},
		{"405 lists the allowed methods", "POST", "/users/42", "", 405, "Method Not Allowed\n", "", "GET, HEAD, OPTIONS"},
		{"405 for a PUT-only path", "GET", "/only-put", "", 405, "Method Not Allowed\n", "", "OPTIONS, PUT"},
		{"automatic OPTIONS", "OPTIONS", "/users/42", "", 204, "", "", "GET, HEAD, OPTIONS"},
		{"an OPTIONS pattern wins", "OPTIONS", "/opt", "", 200, "own-options", "", ""},
		{"OPTIONS on an unrouted path", "OPTIONS", "/nowhere", "", 404, "404 page not found\n", "", ""},
		{"OPTIONS *", "OPTIONS", "*", "", 204, "", "", ""},
		{"no pattern", "GET", "/nowhere", "", 404, "404 page not found\n", "", ""},
	} {
		host := tc.host
		if host == "" {
			host = "example.com"
		}
		resp, body := rc.Do(tc.method, tc.target, host)
		loc, allow := resp.Header.Get("Location"), resp.Header.Get("Allow")
		if tc.target == "*" {
			allow = "" // lists every method; checked by the code only
		}
		if resp.StatusCode != tc.code || tc.code != 307 && body != tc.body || loc != tc.location || allow != tc.allow {
			t.Errorf("%s: %s %s: got %d %q Location %q Allow %q; want %d %q %q %q",
				tc.rule, tc.method, tc.target, resp.StatusCode, body, loc, allow, tc.code, tc.body, tc.location, tc.allow)
		}
	}
}

func TestCustomFallbacks(t *testing.T) {
	r := New()
	r.Handle("GET /a", name("a"))
	r.NotFound = riptide.HandlerFunc(func(c *riptide.Ctx) { c.SetStatus(404); c.WriteString("custom 404") })
	r.MethodNotAllowed = riptide.HandlerFunc(func(c *riptide.Ctx) { c.SetStatus(405); c.WriteString("custom 405") })
	rc := dial(t, serve(t, r))
	if resp, body := rc.Do("GET", "/b", "x"); resp.StatusCode != 404 || body != "custom 404" {
		t.Errorf("NotFound: %d %q", resp.StatusCode, body)
	}
	if resp, body := rc.Do("PUT", "/a", "x"); resp.StatusCode != 405 || body != "custom 405" || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("MethodNotAllowed: %d %q Allow %q", resp.StatusCode, body, resp.Header.Get("Allow"))
	}
}

// tag is middleware that appends its label to the X-Trace header.
func tag(label string) Middleware {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.AddHeader("X-Trace", label)
			next.ServeCtx(c)
		})
	}
}

func TestGroupsAndMiddleware(t *testing.T) {
	r := New()
	r.Use(tag("r1"), tag("r2"))
	r.Use(tag("r3"))
	api := r.Group("/api/", tag("g1"))
	api.Handle("GET /users/{id}", name("user", "id"))
	v2 := api.Group("/v2", tag("g2"))
	v2.Handle("GET /", name("v2 tree"))
	v2.HandleFunc("POST /items", name("items"))
	api.Handle("GET h.example/host", name("host in a group"))
	r.Handle("/plain", name("plain"))
	rc := dial(t, serve(t, r))
	for _, tc := range []struct {
		method, target, body, trace string
	}{
		{"GET", "/api/users/7", "user id=7", "r1,r2,r3,g1"},
		{"GET", "/api/v2/anything", "v2 tree", "r1,r2,r3,g1,g2"},
		{"POST", "/api/v2/items", "items", "r1,r2,r3,g1,g2"},
		{"GET", "/plain", "plain", "r1,r2,r3"},
		{"GET", "/api/host", "404 page not found\n", "r1,r2,r3,g1"}, // other host: the group owns /api
		{"GET", "/missing", "404 page not found\n", "r1,r2,r3"},
	} {
		resp, body := rc.Do(tc.method, tc.target, "x")
		trace := strings.Join(resp.Header.Values("X-Trace"), ",")
		if body != tc.body || trace != tc.trace {
			t.Errorf("%s %s: body %q trace %q, want %q %q", tc.method, tc.target, body, trace, tc.body, tc.trace)
		}
	}
	// A host pattern in a group: the prefix goes before the path.
	if resp, body := rc.Do("GET", "/api/host", "h.example"); body != "host in a group" || strings.Join(resp.Header.Values("X-Trace"), ",") != "r1,r2,r3,g1" {
		t.Errorf("host pattern in a group: %q %v", body, resp.Header.Values("X-Trace"))
	}
}

func TestMount(t *testing.T) {
	r := New()
	r.Mount("/legacy", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintf(w, "%s %s", req.Method, req.URL.Path)
	}))
	r.Handle("GET /legacy/native", name("native"))
	rc := dial(t, serve(t, r))
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/legacy/a/b", "GET /a/b"},
		{"DELETE", "/legacy/", "DELETE /"},
		{"GET", "/legacy/native", "native"},
	} {
		if _, body := rc.Do(tc.method, tc.target, "x"); body != tc.body {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.target, body, tc.body)
		}
	}
	if resp, _ := rc.Do("GET", "/legacy", "x"); resp.StatusCode != 307 || resp.Header.Get("Location") != "/legacy/" {
		t.Errorf("GET /legacy: %d Location %q, want a redirect to /legacy/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestRegistrationPanics(t *testing.T) {
	nine := "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}"
	for _, tc := range []struct {
		rule     string
		existing []string
		pattern  string
		want     string // in the panic message
	}{
		{"the same pattern twice", []string{"GET /a/{x}"}, "GET /a/{y}", "conflicts"},
		{"overlapping, neither more specific", []string{"/a/{x}"}, "/{x}/b", "conflicts"},
		{"more methods but a more specific path", []string{"GET /{x}"}, "/a", "conflicts"},
		{"a multi and a trailing slash", []string{"/a/"}, "/a/{rest...}", "conflicts"},
		{"no slash", nil, "GET users", "missing /"},
		{"a wildcard inside a segment", nil, "/a{x}", "must start with '{'"},
		{"an unclosed wildcard", nil, "/{x", "must end with '}'"},
		{"{...} not last", nil, "/{x...}/a", "not at end"},
		{"{$} not last", nil, "/{$}/a", "not at end"},
		{"a duplicate name", nil, "/{x}/{x}", "duplicate"},
		{"a bad name", nil, "/{1x}", "bad wildcard name"},
		{"an empty wildcard", nil, "/{}", "empty wildcard"},
		{"an invalid method", nil, "G(T /a", "invalid method"},
		{"an unclean path", nil, "/a/../b", "unclean"},
		{"more wildcards than MaxPathValues", nil, nine, "MaxPathValues"},
	} {
		r := New()
		for _, p := range tc.existing {
			r.Handle(p, name(p))
		}
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			r.Handle(tc.pattern, name(tc.pattern))
			return "no panic"
		}()
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: Handle(%q) panicked with %q, want it to mention %q", tc.rule, tc.pattern, got, tc.want)
		}
	}
	for _, ok := range [][]string{
		{"GET /a/{x}", "POST /a/{x}"},      // disjoint methods
		{"/a/{x}", "/a/b"},                 // more specific
		{"GET /a", "HEAD /a"},              // HEAD is more specific than GET
		{"/a/", "/a/{$}"},                  // {$} is more specific
		{"a.com/{x}", "/{x}"},              // hosts never conflict
		{"/{x}/{y}", "/{x}/{y}/{z...}"},    // different lengths
		{"/a/{x...}", "/a/b/{y}/c/{z...}"}, // more specific
	} {
		r := New()
		for _, p := range ok {
			r.Handle(p, name(p))
		}
	}
}
