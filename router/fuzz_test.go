package router

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/riptide-http/riptide/internal/loopback"
)

// fuzzPatterns is a fixed pattern set for FuzzMatchesServeMux: literals,
// wildcards, multis, {$}, trailing slashes, escapes, methods and a host.
var fuzzPatterns = []string{
	"GET /{$}", "/static/", "GET /users/new", "GET /users/{id}", "POST /users/{id}",
	"/users/{id}/posts/{post}", "/files/{path...}", "GET /a%20b/{x}", "/a%2Fb/c",
	"GET /x/{y}/z/", "PUT /x/{y}/{$}", "api.example.com/users/{id}", "HEAD /head/{h}",
}

var fuzzServer struct {
	once sync.Once
	addr string
	mux  *http.ServeMux
}

// FuzzMatchesServeMux sends arbitrary paths to a Router and to an
// http.ServeMux with the same patterns and compares the routing decision,
// as TestMatchesServeMux does for random ones. Inputs the HTTP/1.1 parser
// refuses (400) or net/http cannot parse are skipped.
func FuzzMatchesServeMux(f *testing.F) {
	for _, p := range []string{"/", "/users/7", "/users/%2e%2e/posts/1", "//files/a/../b", "/a%20b/%41", "/x/%2F/z", "/static"} {
		f.Add(byte(0), p)
	}
	f.Fuzz(func(t *testing.T, m byte, target string) {
		fuzzServer.once.Do(func() {
			r, mux := New(), http.NewServeMux()
			for _, p := range fuzzPatterns {
				if rerr, merr := tryRegister(r, mux, p); rerr != nil || merr != nil {
					panic(p)
				}
			}
			fuzzServer.mux = mux
			var err error
			fuzzServer.addr, _, err = loopback.Start(r) // lives as long as the fuzz process
			if err != nil {
				panic(err)
			}
		})
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") {
			return
		}
		if _, err := url.ParseRequestURI(target); err != nil {
			return
		}
		method := []string{"GET", "HEAD", "POST", "PUT", "DELETE"}[int(m)%5]
		host := []string{"example.com", "api.example.com"}[int(m)/5%2]
		resp, _ := loopback.DialConn(t, fuzzServer.addr).Do(method, target, host)
		if resp.StatusCode == 400 {
			return // refused by the parser: not a routing decision
		}
		got := outcome(resp.StatusCode, resp.Header)
		want := fromServeMux(fuzzServer.mux, method, target, host)
		if got != want && !unclean(target) && !slashSegment(target) {
			t.Errorf("%s %s (Host %s)\n router:   %s\n ServeMux: %s", method, target, host, got, want)
		}
	})
}

// slashSegment: ServeMux decodes a segment before it looks at it, and a
// segment that is exactly "%2F" becomes "/", its mark for the end of a path
// with a trailing slash: {$} matches it and a wildcard does not. The router
// takes it as a segment whose value is "/". Not compared.
func slashSegment(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	for _, seg := range strings.Split(p, "/") {
		if strings.EqualFold(seg, "%2F") {
			return true
		}
	}
	return false
}

// unclean: ServeMux writes the clean form of an escaped, unclean path into
// url.URL.Path, which escapes its '%' again ("%25"); the router redirects
// to the clean path as sent. That one difference is not compared.
func unclean(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	return strings.Contains(p, "%") && !isClean(p)
}
