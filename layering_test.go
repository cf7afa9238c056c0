package riptide

import (
	"os"
	"os/exec"
	"slices"
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
	{pkg: "internal/reqhead", forbid: []string{"net/http/...", modulePath, modulePath + "/internal/h2", modulePath + "/internal/h3srv", modulePath + "/internal/evloop"}},
	{pkg: "internal/workq", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/internal/evloop"}},
	// The HTTP/3 engine is written against the quicx interfaces: no QUIC
	// implementation, no face, no other engine.
	{pkg: "internal/h3srv", forbid: []string{"net/http/...", modulePath, "github.com/quic-go/...", modulePath + "/internal/h2", modulePath + "/internal/evloop", modulePath + "/compress/..."}},
	// The HTTP/3 codec is sans-I/O: no QUIC, no engine, no face.
	{pkg: "h3", forbid: []string{"net/http/...", modulePath, "github.com/quic-go/...", modulePath + "/quicx", modulePath + "/internal/h3srv"}},
	// The QUIC seam's interfaces depend on nothing of the module.
	{pkg: "quicx", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/h3/...", modulePath + "/internal/..."}},
	// The in-memory QUIC pair implements the quicx interfaces for the
	// engine's tests: no QUIC implementation (the core stays free of
	// quic-go), no face, no engine, no codec.
	// The raw HTTP/2 client of the tests (internal/h2's and the root's)
	// knows no package of the module: internal/h2's tests import it
	// without a cycle, and it cannot test the engine with the engine's
	// own code.
	{pkg: "internal/h2test", forbid: []string{modulePath, modulePath + "/h1/...", modulePath + "/internal/h2", modulePath + "/internal/h3srv", modulePath + "/internal/evloop", modulePath + "/internal/reqhead"}},
	{pkg: "internal/quicxtest", forbid: []string{"net/http/...", modulePath, "github.com/quic-go/...", modulePath + "/h1/...", modulePath + "/h3/...", modulePath + "/internal/h2", modulePath + "/internal/h3srv", modulePath + "/internal/evloop"}},
	// The takeover seam is a type and a function variable: it names no
	// engine, face or protocol, so that package websocket reaches the
	// event loop through it and the root does not import websocket.
	{pkg: "internal/takeover", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/ws/...", modulePath + "/websocket/...", modulePath + "/internal/h2", modulePath + "/internal/evloop"}},
	// The release tool (its own module) reads the tree as files: it
	// imports no package of the modules it checks, so a broken core or
	// http3 cannot break the tool that reports on them.
	{pkg: "internal/release", forbid: []string{"net/http/...", modulePath, modulePath + "/h1/...", modulePath + "/h3/...", modulePath + "/quicx", modulePath + "/client/...", modulePath + "/compress/...", modulePath + "/http3/...", modulePath + "/otel/...", modulePath + "/internal/h2", modulePath + "/internal/h3srv", modulePath + "/internal/evloop", "github.com/quic-go/..."}},
}

// TestLayeringHTTP3UsesExportedAPI fails when the http3 module imports an
// internal package of the core module: it drives HTTP/3 through the
// exported seam (Server.ListenQUIC, QUICListener, package quicx), so that
// it versions on its own. Every package of the module is checked (the
// http3 package and cmd/h3example), with its test files: their direct
// imports, as go list sees them from the module's directory (the root
// package it imports uses internal packages itself).
func TestLayeringHTTP3UsesExportedAPI(t *testing.T) {
	t.Parallel()
	imports := goListImports(t, "http3", "./...")
	if !slices.Contains(imports[modulePath+"/http3"], modulePath) {
		t.Fatalf("http3 imports %q: not the core (wrong package listed?)", imports[modulePath+"/http3"])
	}
	if _, ok := imports[modulePath+"/http3/cmd/h3example"]; !ok {
		t.Fatalf("go list ./... in http3 listed %d packages, not cmd/h3example", len(imports))
	}
	for pkg, deps := range imports {
		for _, d := range deps {
			if forbidden(d, modulePath+"/internal/...") {
				t.Errorf("%s (or its tests) imports %s: the core's internal packages are not its API", pkg, d)
			}
		}
	}
}

// goListImports returns the packages that the packages matching pattern
// import directly, their test files included, by package: go list run in
// dir (a module's directory).
func goListImports(t *testing.T, dir, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, pattern)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	return imports
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
