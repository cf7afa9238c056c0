package routerbench

import (
	"bufio"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/julienschmidt/httprouter"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/router"
)

type route struct{ method, path string } // path in httprouter syntax

func loadRoutes(t testing.TB) []route {
	f, err := os.Open("testdata/github_api.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rs []route
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		m, p, _ := strings.Cut(line, " ")
		rs = append(rs, route{m, p})
	}
	if len(rs) != 203 {
		t.Fatalf("%d routes, want 203", len(rs))
	}
	return rs
}

var param = regexp.MustCompile(`:([A-Za-z_]+)`)

// braces turns ":name" into "{name}" (ServeMux, chi and riptide syntax).
func braces(p string) string { return param.ReplaceAllString(p, "{$1}") }

// hits counts handler calls by route index, to check the routing.
var hits []int

func riptideRouter(rs []route) *router.Router {
	r := router.New()
	for i, rt := range rs {
		r.HandleFunc(rt.method+" "+braces(rt.path), func(*riptide.Ctx) { hits[i]++ })
	}
	return r
}

func httpRouter(rs []route) http.Handler {
	r := httprouter.New()
	for i, rt := range rs {
		r.Handle(rt.method, rt.path, func(http.ResponseWriter, *http.Request, httprouter.Params) { hits[i]++ })
	}
	return r
}

func chiRouter(rs []route) http.Handler {
	r := chi.NewRouter()
	for i, rt := range rs {
		r.MethodFunc(rt.method, braces(rt.path), func(http.ResponseWriter, *http.Request) { hits[i]++ })
	}
	return r
}

func serveMux(rs []route) http.Handler {
	m := http.NewServeMux()
	for i, rt := range rs {
		m.HandleFunc(rt.method+" "+braces(rt.path), func(http.ResponseWriter, *http.Request) { hits[i]++ })
	}
	return m
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// requests builds one request per route, its path the route's own
// (":owner" segments sent literally), as the original benchmark does.
func nativeCtx(method, path string) *riptide.Ctx {
	c := new(riptide.Ctx)
	req := c.Request()
	req.Method, req.Path, req.Host = []byte(method), []byte(path), []byte("api.github.com")
	return c
}

func httpRequest(method, path string) *http.Request {
	r, _ := http.NewRequest(method, "http://api.github.com"+path, nil)
	return r
}

// TestRoutersAgree: every router calls each route's own handler for the
// route's request, and nothing else.
func TestRoutersAgree(t *testing.T) {
	rs := loadRoutes(t)
	check := func(name string, serve func(i int)) {
		hits = make([]int, len(rs))
		for i := range rs {
			serve(i)
			if hits[i] != 1 {
				t.Fatalf("%s: %s %s did not reach its handler", name, rs[i].method, rs[i].path)
			}
			hits[i] = 0
		}
		for i, n := range hits {
			if n != 0 {
				t.Fatalf("%s: route %d hit %d times", name, i, n)
			}
		}
	}
	rr := riptideRouter(rs)
	check("riptide", func(i int) { rr.ServeCtx(nativeCtx(rs[i].method, rs[i].path)) })
	for name, h := range map[string]http.Handler{"httprouter": httpRouter(rs), "chi": chiRouter(rs), "ServeMux": serveMux(rs)} {
		check(name, func(i int) { h.ServeHTTP(&discard{h: http.Header{}}, httpRequest(rs[i].method, rs[i].path)) })
	}
}

// The three lookups of the original benchmark: a static route, a route
// with parameters, and every route in turn.
var lookups = []struct{ name, method, path string }{
	{"static", "GET", "/user/repos"},
	{"param", "GET", "/repos/julienschmidt/httprouter/stargazers"},
	{"all", "", ""},
}

func BenchmarkGitHub(b *testing.B) {
	rs := loadRoutes(b)
	hits = make([]int, len(rs))
	rr := riptideRouter(rs)
	https := []struct {
		name string
		h    http.Handler
	}{{"httprouter", httpRouter(rs)}, {"chi", chiRouter(rs)}, {"ServeMux", serveMux(rs)}}
	for _, l := range lookups {
		b.Run("riptide/"+l.name, func(b *testing.B) {
			// One Ctx, as the server keeps one per connection; each
			// request sets its method and path in it.
			type target struct{ method, path []byte }
			var ts []target
			if l.name == "all" {
				for _, rt := range rs {
					ts = append(ts, target{[]byte(rt.method), []byte(rt.path)})
				}
			} else {
				ts = append(ts, target{[]byte(l.method), []byte(l.path)})
			}
			c := nativeCtx("GET", "/")
			req := c.Request()
			b.ReportAllocs()
			if len(ts) == 1 { // the same request each time, as for the others
				req.Method, req.Path = ts[0].method, ts[0].path
				for b.Loop() {
					c.ClearPathValues() // the server does this per request
					rr.ServeCtx(c)
				}
				return
			}
			for b.Loop() {
				for _, t := range ts {
					req.Method, req.Path = t.method, t.path
					c.ClearPathValues()
					rr.ServeCtx(c)
				}
			}
		})
		for _, hr := range https {
			b.Run(hr.name+"/"+l.name, func(b *testing.B) {
				var reqs []*http.Request
				if l.name == "all" {
					for _, rt := range rs {
						reqs = append(reqs, httpRequest(rt.method, rt.path))
					}
				} else {
					reqs = append(reqs, httpRequest(l.method, l.path))
				}
				w := &discard{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					for _, r := range reqs {
						hr.h.ServeHTTP(w, r)
					}
				}
			})
		}
	}
}
