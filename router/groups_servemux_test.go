package router

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestGroupsMatchServeMux checks the rule of docs/router.md "Groups own
// their prefix" against http.ServeMux: random patterns are registered on
// a Router that also has groups with middleware (nested ones included),
// and on ServeMuxes: one with every pattern, and one per group prefix P
// with only the patterns inside P (their path starts with P's segments,
// literally, computed here from the pattern text). A request whose path
// is under no prefix must be routed as by the whole ServeMux; one under P
// (the longest) as by P's ServeMux: its pattern, its redirect to the path
// with a slash, or its 404/405 and Allow, then answered inside the
// group's middleware. A path that is not clean is redirected to its clean
// form as by the ServeMux of the group owning that.
func TestGroupsMatchServeMux(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	trials, requests := 60, 150
	if testing.Short() {
		trials = 10
	}
	prefixes := []string{"/a", "/a/users", "/users", "/b"}
	var compared, owned, ownedServed, ownedAnswered int
	for trial := range trials {
		r, all := New(), http.NewServeMux()
		// Groups first, in random order and nesting; a group's routes are
		// registered on r below, so its middleware runs only where it owns.
		var groups []string
		for _, p := range prefixes {
			if rng.IntN(3) == 0 {
				continue
			}
			groups = append(groups, p)
			if p == "/a/users" && rng.IntN(2) == 0 {
				// The outer group owns "/a" too (a second one is ignored).
				r.Group("/a", groupTag("/a")).Group("/users", groupTag("/a/users"))
				if !slices.Contains(groups, "/a") {
					groups = append(groups, "/a")
				}
				continue
			}
			r.Group(p, groupTag(p))
		}
		byPrefix := map[string]*http.ServeMux{}
		for _, p := range groups {
			byPrefix[p] = http.NewServeMux()
		}
		for range 4 + rng.IntN(30) {
			p := randomPattern(rng)
			if rerr, merr := tryRegister(r, all, p); rerr != nil || merr != nil {
				if (rerr == nil) != (merr == nil) {
					t.Fatalf("trial %d: pattern %q: router error %v, ServeMux error %v", trial, p, rerr, merr)
				}
				continue
			}
			for prefix, mux := range byPrefix {
				if patternInside(p, prefix) {
					if _, err := tryRegister(New(), mux, p); err != nil {
						t.Fatalf("pattern %q on %s's ServeMux: %v", p, prefix, err)
					}
				}
			}
		}
		rc := dial(t, serve(t, r))
		for range requests {
			method := []string{"GET", "HEAD", "POST", "PUT", "DELETE"}[rng.IntN(5)]
			host := []string{"example.com", "example.com:8080", "other.org"}[rng.IntN(3)]
			target := randomPath(rng)
			if rng.IntN(3) == 0 { // aim at the prefixes more often
				target = prefixes[rng.IntN(len(prefixes))] + strings.TrimSuffix(randomPath(rng), "/")
			}
			resp, _ := rc.Do(method, target, host)
			got := outcome(resp.StatusCode, resp.Header) + " group=" + resp.Header.Get("X-Group")
			// A path that is not clean is redirected to its clean form,
			// whose owner decides whether a slash is added.
			path, _, _ := strings.Cut(target, "?")
			clean := cleanPath(path)
			owner := ownerOf(clean, groups)
			var want string
			switch {
			case owner == "":
				want = fromServeMux(all, method, target, host) + " group="
			case clean != path:
				want = fromServeMux(byPrefix[owner], method, target, host) + " group="
			default:
				owned++
				want = fromServeMux(byPrefix[owner], method, target, host)
				switch statusOf(want) {
				case 404, 405:
					ownedAnswered++
					want += " group=" + owner
				default:
					ownedServed++
					want += " group="
				}
			}
			if got != want {
				t.Errorf("trial %d: %s %s (Host %s), groups %v\n router: %s\n want:   %s\npatterns: %s",
					trial, method, target, host, groups, got, want, listPatterns(all))
			}
			compared++
		}
	}
	t.Logf("%d requests compared, %d under a group's prefix: %d routed there, %d answered by the group", compared, owned, ownedServed, ownedAnswered)
	if ownedServed < trials || ownedAnswered < trials {
		t.Errorf("the random requests miss a case: %d under a prefix routed, %d answered by the group", ownedServed, ownedAnswered)
	}
}

// groupTag is group middleware that names the group in X-Group.
func groupTag(prefix string) Middleware {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.SetHeader("X-Group", prefix)
			next.ServeCtx(c)
		})
	}
}

// decodedSegments splits a path (or a pattern's path) into its segments,
// each unescaped as ServeMux matches them ("%2F" stays within one).
func decodedSegments(path string) []string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = u
		}
	}
	return segs
}

// hasSegments reports whether segs starts with those of prefix.
func hasSegments(segs []string, prefix string) bool {
	want := decodedSegments(prefix)
	if len(segs) < len(want) {
		return false
	}
	for i, w := range want {
		if segs[i] != w {
			return false
		}
	}
	return true
}

// patternInside reports whether every path the pattern matches is under
// prefix: its literal segments, before any wildcard, start with prefix's.
func patternInside(pattern, prefix string) bool {
	path := pattern[strings.IndexByte(pattern, '/'):]
	var lit []string
	for _, s := range decodedSegments(path) {
		if strings.HasPrefix(s, "{") {
			break
		}
		lit = append(lit, s)
	}
	if strings.HasSuffix(path, "/") && len(lit) > 0 && lit[len(lit)-1] == "" {
		lit = lit[:len(lit)-1] // the trailing slash is a wildcard
	}
	return hasSegments(lit, prefix)
}

// ownerOf returns the longest of prefixes that path is or is under, or "".
func ownerOf(path string, prefixes []string) string {
	segs := decodedSegments(path)
	owner := ""
	for _, p := range prefixes {
		if hasSegments(segs, p) && len(p) > len(owner) {
			owner = p
		}
	}
	return owner
}
