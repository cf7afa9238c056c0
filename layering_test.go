package riptide

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// modulePath is the core module's import path.
const modulePath = "github.com/riptide-http/riptide"

// layers are the engine packages that must stay below HTTP: each imports,
// directly or not, none of the packages listed (a path ending in "/..."
// also forbids the packages below it).
//
// internal/h2 may import h1 but not the root, nor any net/http package,
// directly or not: it reads and writes frames itself (frame.go) and takes
// only HPACK from golang.org/x/net (golang.org/x/net/http2 would bring
// net/http in).
var layers = []struct {
	pkg    string
	forbid []string
}{
	{pkg: "internal/h2", forbid: []string{"net/http/...", "golang.org/x/net/http2", modulePath, modulePath + "/compress/...", modulePath + "/internal/evloop"}},
	{pkg: "internal/evloop", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/compress/..."}},
	{pkg: "internal/workq", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/internal/evloop"}},
}

// TestLayering fails when an engine package imports an HTTP package (go
// list -deps, for Linux, where the event loop's files build).
func TestLayering(t *testing.T) {
	t.Parallel()
	for _, l := range layers {
		deps := goListDeps(t, modulePath+"/"+l.pkg)
		for _, d := range deps {
			for _, f := range l.forbid {
				if forbidden(d, f) {
					t.Errorf("%s imports %s (forbidden: %s)", l.pkg, d, f)
				}
			}
		}
	}
}

// forbidden reports whether the import path dep matches the pattern f.
func forbidden(dep, f string) bool {
	if base, ok := strings.CutSuffix(f, "/..."); ok {
		return dep == base || strings.HasPrefix(dep, base+"/")
	}
	return dep == f
}

// goListDeps returns the packages pkg depends on, itself included.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != pkg {
		t.Fatalf("go list -deps %s: unexpected output %q", pkg, out)
	}
	return deps
}
