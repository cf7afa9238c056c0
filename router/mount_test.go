package router

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
	"strings"
	"testing"
)

// TestMountKeepPathPprof mounts net/http/pprof (its handlers in
// http.DefaultServeMux at /debug/pprof/...) with MountKeepPath, which keeps
// the path whole, and with Mount, which strips the prefix and so misses
// every pprof pattern (the rule in docs/router.md).
func TestMountKeepPathPprof(t *testing.T) {
	r := New()
	r.MountKeepPath("/debug/pprof", http.DefaultServeMux)
	r.Mount("/stripped", http.DefaultServeMux)
	rc := dial(t, serve(t, r))

	if resp, body := rc.Do("GET", "/debug/pprof/cmdline", "x"); resp.StatusCode != 200 || body != strings.Join(os.Args, "\x00") {
		t.Errorf("GET /debug/pprof/cmdline: %d %q, want 200 with the command line %q", resp.StatusCode, body, os.Args)
	}
	if resp, body := rc.Do("GET", "/debug/pprof/goroutine?debug=1", "x"); resp.StatusCode != 200 || !strings.HasPrefix(body, "goroutine profile: total ") {
		t.Errorf("GET /debug/pprof/goroutine?debug=1: %d %.60q, want 200 with a goroutine profile", resp.StatusCode, body)
	}
	if resp, body := rc.Do("GET", "/debug/pprof/", "x"); resp.StatusCode != 200 || !strings.Contains(body, "Types of profiles available") {
		t.Errorf("GET /debug/pprof/: %d %.60q, want pprof's index", resp.StatusCode, body)
	}
	// Mount strips "/stripped": the mux sees the path below the prefix,
	// "/cmdline", which pprof does not serve, as with "/debug/pprof" mounted
	// by Mount.
	if resp, _ := rc.Do("GET", "/stripped/cmdline", "x"); resp.StatusCode != 404 {
		t.Errorf("GET /stripped/cmdline through Mount: %d, want 404 (the prefix is stripped)", resp.StatusCode)
	}
	if resp, body := rc.Do("GET", "/stripped/debug/pprof/cmdline", "x"); resp.StatusCode != 200 || body != strings.Join(os.Args, "\x00") {
		t.Errorf("GET /stripped/debug/pprof/cmdline through Mount: %d %q, want pprof's answer for the stripped path", resp.StatusCode, body)
	}
}
