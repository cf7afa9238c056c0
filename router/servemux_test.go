package router

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// TestMatchesServeMux registers the same random pattern sets on a Router
// and on an http.ServeMux, checks that both accept and refuse the same
// patterns (conflicts), then sends the same requests to both and compares
// every routing decision: status, the pattern chosen, its path values,
// redirect targets and Allow headers.
func TestMatchesServeMux(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	trials, requests := 60, 150
	if testing.Short() {
		trials = 10
	}
	var registered, refused, compared int
	outcomes := map[int]int{} // by status
	for trial := range trials {
		r, mux := New(), http.NewServeMux()
		for range 4 + rng.IntN(30) {
			p := randomPattern(rng)
			rerr, merr := tryRegister(r, mux, p)
			if (rerr == nil) != (merr == nil) {
				t.Fatalf("trial %d: pattern %q: router error %v, ServeMux error %v", trial, p, rerr, merr)
			}
			if rerr == nil {
				registered++
			} else {
				refused++
			}
		}
		rc := dial(t, serve(t, r))
		for range requests {
			method := []string{"GET", "HEAD", "POST", "PUT", "DELETE"}[rng.IntN(5)]
			host := []string{"example.com", "example.com:8080", "other.org"}[rng.IntN(3)]
			target := randomPath(rng)
			if rng.IntN(8) == 0 {
				target += "?q=1"
			}
			got := fromRouter(rc, method, target, host)
			want := fromServeMux(mux, method, target, host)
			if got != want {
				t.Errorf("trial %d: %s %s (Host %s)\n router:   %s\n ServeMux: %s\npatterns: %s",
					trial, method, target, host, got, want, listPatterns(mux))
			}
			compared++
			outcomes[statusOf(want)]++
		}
	}
	t.Logf("%d patterns registered, %d refused by both; %d requests compared; statuses %v", registered, refused, compared, outcomes)
	if refused == 0 || registered < 10*trials {
		t.Errorf("the random patterns did not exercise both outcomes: %d registered, %d refused", registered, refused)
	}
	for _, code := range []int{200, 307, 404, 405} {
		if outcomes[code] < trials {
			t.Errorf("only %d responses with status %d: the random requests miss a case", outcomes[code], code)
		}
	}
}

func statusOf(outcome string) int {
	var code int
	fmt.Sscan(outcome, &code)
	return code
}

var patternsOf = map[*http.ServeMux][]string{}

func listPatterns(mux *http.ServeMux) string { return strings.Join(patternsOf[mux], " | ") }

// tryRegister registers p on both, returning each one's panic as an error.
func tryRegister(r *Router, mux *http.ServeMux, p string) (rerr, merr error) {
	names := wildcardNames(p)
	catch := func(err *error, f func()) {
		defer func() {
			if v := recover(); v != nil {
				*err = fmt.Errorf("%v", v)
			}
		}()
		f()
	}
	catch(&rerr, func() {
		r.HandleFunc(p, func(c *riptide.Ctx) {
			c.SetHeader("X-Route", describe(p, names, func(n string) string { return string(c.PathValue(n)) }))
		})
	})
	catch(&merr, func() {
		mux.HandleFunc(p, func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("X-Route", describe(p, names, req.PathValue))
		})
	})
	if merr == nil {
		patternsOf[mux] = append(patternsOf[mux], p)
	}
	return rerr, merr
}

var wildcardRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

func wildcardNames(p string) []string {
	var names []string
	for _, m := range wildcardRE.FindAllStringSubmatch(p, -1) {
		names = append(names, m[1])
	}
	return names
}

// describe names the pattern and its values, escaped for a header.
func describe(p string, names []string, value func(string) string) string {
	s := url.QueryEscape(p)
	for _, n := range names {
		s += " " + n + "=" + url.QueryEscape(value(n))
	}
	return s
}

// outcome is what a request's routing decided, in comparable form.
func outcome(code int, h http.Header) string {
	loc, _ := url.PathUnescape(h.Get("Location"))
	var allow []string
	for _, m := range strings.Split(h.Get("Allow"), ", ") {
		if m != "OPTIONS" && m != "" { // the router also allows OPTIONS
			allow = append(allow, m)
		}
	}
	return fmt.Sprintf("%d route=%q location=%q allow=%v", code, h.Get("X-Route"), loc, allow)
}

func fromRouter(rc *loopback.Conn, method, target, host string) string {
	resp, _ := rc.Do(method, target, host)
	return outcome(resp.StatusCode, resp.Header)
}

func fromServeMux(mux *http.ServeMux, method, target, host string) string {
	req := httptest.NewRequest(method, target, nil)
	req.Host = host
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	return outcome(w.Code, w.Header())
}

// Pattern and path pieces share one small alphabet so that they collide.
var literals = []string{"a", "b", "users", "a%20b", "%61", "x.y"}

func randomPattern(rng *rand.Rand) string {
	var b strings.Builder
	switch rng.IntN(4) {
	case 0:
		b.WriteString([]string{"GET ", "HEAD ", "POST ", "PUT "}[rng.IntN(4)])
	case 1:
		b.WriteString("GET ")
	}
	if rng.IntN(6) == 0 {
		b.WriteString("example.com")
	}
	n := rng.IntN(4)
	used := map[string]bool{}
	for i := range n {
		b.WriteByte('/')
		switch k := rng.IntN(10); {
		case k < 5:
			b.WriteString(literals[rng.IntN(len(literals))])
		case k < 8:
			name := []string{"x", "y", "z", "id"}[rng.IntN(4)]
			if used[name] {
				name += fmt.Sprint(i)
			}
			used[name] = true
			b.WriteString("{" + name + "}")
		case i == n-1 && k == 8:
			b.WriteString("{rest...}")
		case i == n-1:
			b.WriteString("{$}")
		default:
			b.WriteString(literals[0])
		}
	}
	if n == 0 || rng.IntN(4) == 0 && !strings.HasSuffix(b.String(), "}") {
		b.WriteByte('/')
	}
	return b.String()
}

func randomPath(rng *rand.Rand) string {
	segs := append(slices.Clone(literals), "c", "a%2Fb", "%41", "users", "%2e", "%2E%2e", ".x")
	var b strings.Builder
	for range rng.IntN(5) {
		b.WriteByte('/')
		b.WriteString(segs[rng.IntN(len(segs))])
	}
	if b.Len() == 0 || rng.IntN(3) == 0 {
		b.WriteByte('/')
	}
	p := b.String()
	if rng.IntN(6) == 0 && !strings.Contains(p, "%") {
		// Unclean: a "." or ".." segment or an empty one, anywhere; it
		// is redirected to the clean path.
		at := rng.IntN(len(p) + 1)
		for at < len(p) && p[at] != '/' {
			at++
		}
		p = p[:at] + []string{"/.", "/..", "/", "/./", "/../"}[rng.IntN(5)] + p[at:]
	}
	return p
}
