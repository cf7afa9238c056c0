package routerbench

import (
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// TestGitHubInterleaved measures the three lookups in rounds that take each
// router in turn, and reports each router's fastest and median round (time
// per lookup): on a shared, noisy machine the routers then see the
// same noise, and the fastest round is the least disturbed. Run with
// ROUTERBENCH_INTERLEAVE=1 go test -run Interleaved -v ./routerbench
func TestGitHubInterleaved(t *testing.T) {
	if os.Getenv("ROUTERBENCH_INTERLEAVE") == "" {
		t.Skip("set ROUTERBENCH_INTERLEAVE=1")
	}
	rs := loadRoutes(t)
	hits = make([]int, len(rs))
	for _, l := range lookups {
		var sel []route
		if l.name == "all" {
			sel = rs
		} else {
			sel = []route{{l.method, l.path}}
		}
		interleave(t, l.name, rs, sel)
	}
}

// interleave times passes over the requests for sel on every router,
// round by round, and logs each router's fastest and median pass.
func interleave(t *testing.T, name string, rs, sel []route) {
	rr := riptideRouter(rs)
	c := nativeCtx("GET", "/")
	req := c.Request()
	type target struct{ method, path []byte }
	var ts []target
	var reqs []*http.Request
	for _, rt := range sel {
		ts = append(ts, target{[]byte(rt.method), []byte(rt.path)})
		reqs = append(reqs, httpRequest(rt.method, rt.path))
	}
	w := &discard{h: http.Header{}}
	type runner struct {
		name string
		pass func()
	}
	runners := []runner{{"riptide", func() {
		for _, t := range ts {
			if len(ts) > 1 { // one request: set once, as the others reuse theirs
				req.Method, req.Path = t.method, t.path
			}
			c.ClearPathValues()
			rr.ServeCtx(c)
		}
	}}}
	req.Method, req.Path = ts[0].method, ts[0].path
	for _, hr := range []struct {
		name string
		h    http.Handler
	}{{"httprouter", httpRouter(rs)}, {"chi", chiRouter(rs)}, {"ServeMux", serveMux(rs)}} {
		runners = append(runners, runner{hr.name, func() {
			for _, r := range reqs {
				hr.h.ServeHTTP(w, r)
			}
		}})
	}
	const rounds = 40
	passes := 40000 / len(sel)
	times := make([][]time.Duration, len(runners))
	for range rounds {
		for i, r := range runners {
			start := time.Now()
			for range passes {
				r.pass()
			}
			times[i] = append(times[i], time.Since(start)/time.Duration(passes*len(sel)))
		}
	}
	for i, r := range runners {
		slices.Sort(times[i])
		t.Logf("%-6s %-10s fastest round %v/lookup, median %v", name, r.name, times[i][0], times[i][rounds/2])
	}
}
