package routerbench

import (
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// TestGitHubInterleaved measures the "all" lookup (every route once) in
// rounds that take each router in turn, and reports each router's fastest
// and median round: on a shared, noisy machine the routers then see the
// same noise, and the fastest round is the least disturbed. Run with
// ROUTERBENCH_INTERLEAVE=1 go test -run Interleaved -v ./routerbench
func TestGitHubInterleaved(t *testing.T) {
	if os.Getenv("ROUTERBENCH_INTERLEAVE") == "" {
		t.Skip("set ROUTERBENCH_INTERLEAVE=1")
	}
	rs := loadRoutes(t)
	hits = make([]int, len(rs))
	rr := riptideRouter(rs)
	c := nativeCtx("GET", "/")
	req := c.Request()
	type target struct{ method, path []byte }
	var ts []target
	var reqs []*http.Request
	for _, rt := range rs {
		ts = append(ts, target{[]byte(rt.method), []byte(rt.path)})
		reqs = append(reqs, httpRequest(rt.method, rt.path))
	}
	w := &discard{h: http.Header{}}
	runners := []struct {
		name string
		pass func()
	}{
		{"riptide", func() {
			for _, t := range ts {
				req.Method, req.Path = t.method, t.path
				c.ClearPathValues()
				rr.ServeCtx(c)
			}
		}},
	}
	for _, hr := range []struct {
		name string
		h    http.Handler
	}{{"httprouter", httpRouter(rs)}, {"chi", chiRouter(rs)}, {"ServeMux", serveMux(rs)}} {
		runners = append(runners, struct {
			name string
			pass func()
		}{hr.name, func() {
			for _, r := range reqs {
				hr.h.ServeHTTP(w, r)
			}
		}})
	}
	const rounds, passes = 40, 200
	times := make([][]time.Duration, len(runners))
	for range rounds {
		for i, r := range runners {
			start := time.Now()
			for range passes {
				r.pass()
			}
			times[i] = append(times[i], time.Since(start)/passes)
		}
	}
	for i, r := range runners {
		slices.Sort(times[i])
		t.Logf("%-10s all %d routes: fastest round %v/pass (%.0f ns/lookup), median %v", r.name, len(rs),
			times[i][0], float64(times[i][0].Nanoseconds())/float64(len(rs)), times[i][rounds/2])
	}
}
