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
// also forbids the packages below it). A forbidden entry may instead name
// a direct import only (direct: the package itself must not import it,
// though a dependency may).
//
// internal/h2 may import h1 but not the root, nor net/http itself: it
// reads frames with golang.org/x/net/http2's Framer, and that package
// imports net/http (for its own client and server), so net/http is in
// internal/h2's -deps; the rule for it is therefore "no direct import of
// net/http or any net/http/... package", and no root package at all.
var layers = []struct {
	pkg    string
	forbid []string
	direct []string
}{
	{pkg: "internal/h2", forbid: []string{modulePath, modulePath + "/compress/...", modulePath + "/internal/evloop"}, direct: []string{"net/http/..."}},
	{pkg: "internal/evloop", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/compress/..."}},
	{pkg: "internal/workq", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/internal/evloop"}},
}

// TestLayering fails when an engine package imports an HTTP package (go
// list -deps, for Linux, where the event loop's files build).
func TestLayering(t *testing.T) {
	for _, l := range layers {
		deps := goListDeps(t, modulePath+"/"+l.pkg)
		for _, d := range deps {
			for _, f := range l.forbid {
				if forbidden(d, f) {
					t.Errorf("%s imports %s (forbidden: %s)", l.pkg, d, f)
				}
			}
		}
		if len(l.direct) == 0 {
			continue
		}
		for _, d := range goListImports(t, modulePath+"/"+l.pkg) {
			for _, f := range l.direct {
				if forbidden(d, f) {
					t.Errorf("%s imports %s directly (forbidden: %s)", l.pkg, d, f)
				}
			}
		}
	}
}

// goListImports returns the packages pkg imports directly (its non-test
// files, for Linux).
func goListImports(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", pkg)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -f {{.Imports}} %s: %v", pkg, err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatalf("go list -f {{.Imports}} %s: no imports", pkg)
	}
	return imports
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
