package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// repo returns the repository root and its modules and version.
func repo(t *testing.T) (root, version string, mods []Module) {
	t.Helper()
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	version, err = readVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	mods, err = findModules(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, version, mods
}

// TestModuleZips: every module of the repository makes a valid module zip
// (golang.org/x/mod/zip's rules, which the go command and the module
// proxies apply): no file name Windows reserves (nul, con, aux...), no two
// names differing only in case, no zip over the size limits.
func TestModuleZips(t *testing.T) {
	root, _, mods := repo(t)
	files, err := repoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{corePath, corePath + "/compress", corePath + "/http3"} {
		if !slices.ContainsFunc(mods, func(m Module) bool { return m.Path == want }) {
			t.Errorf("findModules did not find %s in %v", want, mods)
		}
	}
	for _, m := range mods {
		if err := checkZip(root, m, mods, files); err != nil {
			t.Errorf("module %s cannot be released: %v", m.Path, err)
		}
	}
}

// TestModuleZipsCatch: the zip check refuses a reserved Windows name, as
// the go command refuses the module (the core module's
// static/testdata/fuzz/FuzzResolve/nul did), and a nested module's files
// are not the outer module's.
func TestModuleZipsCatch(t *testing.T) {
	root := fakeRepo(t, map[string]string{
		"go.mod":                          "module " + corePath + "\n\ngo 1.26.0\n",
		"a.go":                            "package riptide\n",
		"static/testdata/fuzz/FuzzX/nul":  "go test fuzz v1\n",
		"sub/go.mod":                      "module " + corePath + "/sub\n\ngo 1.26.0\n",
		"sub/testdata/fuzz/FuzzY/aux.txt": "go test fuzz v1\n",
	})
	mods, err := findModules(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := repoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 {
		t.Fatalf("modules %v, want the core and sub", mods)
	}
	for _, m := range mods {
		err := checkZip(root, m, mods, files)
		bad := map[string]string{corePath: "FuzzX/nul", corePath + "/sub": "FuzzY/aux.txt"}[m.Path]
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("module %s: checkZip = %v, want an error naming %s", m.Path, err, bad)
		}
		if m.Path == corePath && strings.Contains(err.Error(), "aux") {
			t.Errorf("the core's check looked into the nested module sub: %v", err)
		}
	}
}

// TestModFiles: every go.mod requires its sibling modules at Version and
// replaces none; go.work uses and replaces every module.
func TestModFiles(t *testing.T) {
	root, version, mods := repo(t)
	for _, err := range checkModFiles(root, version, mods) {
		t.Error(err)
	}
}

// TestSync: sync turns what the repository had before releases (requires
// at v0.0.0 with replace ../, no go.work) into what TestModFiles wants,
// and the check catches each breach before.
func TestSync(t *testing.T) {
	root := fakeRepo(t, map[string]string{
		"go.mod":     "module " + corePath + "\n\ngo 1.26.0\n",
		"version.go": "package riptide\n\nconst Version = \"v0.3.1\"\n",
		"http3/go.mod": "module " + corePath + "/http3\n\ngo 1.26.0\n\nreplace " + corePath + " => ../\n\n" +
			"require (\n\tgithub.com/quic-go/quic-go v0.65.0\n\t" + corePath + " v0.0.0\n)\n",
		"bench/go.mod": "module " + corePath + "/bench\n\ngo 1.26.0\n\nrequire (\n\t" + corePath + " v0.3.1\n\t" +
			corePath + "/http3 v0.3.0\n)\n",
	})
	version, err := readVersion(root)
	if err != nil || version != "v0.3.1" {
		t.Fatalf("readVersion = %q, %v; want v0.3.1", version, err)
	}
	mods, err := findModules(root)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, err := range checkModFiles(root, version, mods) {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"http3/go.mod: require " + corePath + " v0.0.0, want v0.3.1",
		"http3/go.mod: replace " + corePath + ":",
		"bench/go.mod: require " + corePath + "/http3 v0.3.0, want v0.3.1",
		"go.work", // missing
	} {
		if !strings.Contains(all, want) {
			t.Errorf("check before sync lacks %q:\n%s", want, all)
		}
	}
	changed, err := syncModFiles(root, version, mods)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if want := []string{"bench/go.mod", "go.work", "http3/go.mod"}; !reflect.DeepEqual(changed, want) {
		t.Errorf("sync changed %v, want %v", changed, want)
	}
	for _, err := range checkModFiles(root, version, mods) {
		t.Errorf("after sync: %v", err)
	}
	h3, err := os.ReadFile(filepath.Join(root, "http3/go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(h3); strings.Contains(s, "replace") || !strings.Contains(s, corePath+" v0.3.1") || !strings.Contains(s, "quic-go v0.65.0") {
		t.Errorf("http3/go.mod after sync:\n%s", s)
	}
	if changed, err := syncModFiles(root, version, mods); err != nil || len(changed) != 0 {
		t.Errorf("a second sync changed %v (%v), want nothing", changed, err)
	}
}

// TestChangelog: CHANGELOG.md's first entry is Version.
func TestChangelog(t *testing.T) {
	root, version, _ := repo(t)
	if err := checkChangelog(root, version); err != nil {
		t.Error(err)
	}
	fake := fakeRepo(t, map[string]string{"CHANGELOG.md": "# Changelog\n\n## v0.1.0 — 2026-12-07\n"})
	if err := checkChangelog(fake, "v0.2.0"); err == nil {
		t.Error("a changelog whose first entry is v0.1.0 passes for v0.2.0")
	}
	if err := checkChangelog(fake, "v0.1.0"); err != nil {
		t.Errorf("v0.1.0: %v", err)
	}
}

// TestAPI: api/next.txt lists the exported API of the working tree, so
// that every change of it shows in review as a diff of that file.
func TestAPI(t *testing.T) {
	root, _, mods := repo(t)
	cur, err := apiListing(root, mods)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := readAPI(filepath.Join(root, apiFile))
	if err != nil {
		t.Fatal(err)
	}
	removed, added := diffAPI(committed, cur)
	if len(removed)+len(added) > 0 {
		var b strings.Builder
		for _, l := range removed {
			b.WriteString("\n- " + l)
		}
		for _, l := range added {
			b.WriteString("\n+ " + l)
		}
		t.Errorf("the exported API differs from %s (%d lines gone or changed, %d new); "+
			"if that is meant, run `go run ./internal/release api -w`, say it in CHANGELOG.md, and commit:%s",
			apiFile, len(removed), len(added), b.String())
	}
	for _, want := range []string{
		"pkg " + corePath + ", const Version untyped string", // no value: it changes with each release
		"pkg " + corePath + ", func FromHTTP(net/http.Handler) Handler",
		"pkg " + corePath + "/http3, func Serve(*" + corePath + ".Server, net.PacketConn, *crypto/tls.Config, *Options) error",
	} {
		if !slices.ContainsFunc(cur, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("the listing lacks %q", want)
		}
	}
	for _, l := range cur {
		if strings.Contains(l, "/internal/") || strings.Contains(l, "/bench/") {
			t.Errorf("the listing holds a package that is not API: %s", l)
		}
	}
}

// TestAPICompat: against the previous release's frozen listing, the tree
// changes API only as the compatibility policy allows (no previous
// release: nothing to compare).
func TestAPICompat(t *testing.T) {
	root, version, mods := repo(t)
	report, err := apiDiff(root, version, mods)
	t.Log(report)
	if err != nil {
		t.Error(err)
	}
}

// TestCompatible: the policy's rule on removed API.
func TestCompatible(t *testing.T) {
	removed := []string{"pkg x, func F()"}
	for _, c := range []struct {
		prev, version string
		removed       []string
		ok            bool
	}{
		{"v0.1.0", "v0.1.1", nil, true},
		{"v0.1.0", "v0.1.1", removed, false}, // a v0 patch keeps the API
		{"v0.1.3", "v0.2.0", removed, true},  // a v0 minor may break it
		{"v1.2.0", "v1.3.0", removed, false}, // from v1, only a major
		{"v1.2.0", "v2.0.0", removed, true},
		{"v0.9.0", "v1.0.0", removed, true},
	} {
		if err := compatible(c.prev, c.version, c.removed); (err == nil) != c.ok {
			t.Errorf("compatible(%s, %s, %d removed) = %v, want ok %v", c.prev, c.version, len(c.removed), err, c.ok)
		}
	}
}

// TestDiffAPI: removed and added lines of two sorted listings.
func TestDiffAPI(t *testing.T) {
	old := []string{"a", "b changed", "d"}
	cur := []string{"a", "b", "c", "d", "e"}
	removed, added := diffAPI(old, cur)
	if !reflect.DeepEqual(removed, []string{"b changed"}) || !reflect.DeepEqual(added, []string{"b", "c", "e"}) {
		t.Errorf("diffAPI = %q, %q", removed, added)
	}
}

// TestPreviousRelease: the newest frozen listing before the version.
func TestPreviousRelease(t *testing.T) {
	root := fakeRepo(t, map[string]string{
		"api/v0.1.0.txt": "", "api/v0.2.0.txt": "", "api/v0.10.0.txt": "", "api/v0.11.0.txt": "", "api/next.txt": "",
	})
	for version, want := range map[string]string{"v0.1.0": "", "v0.2.0": "v0.1.0", "v0.11.0": "v0.10.0", "v0.12.0": "v0.11.0"} {
		if got, err := previousRelease(root, version); err != nil || got != want {
			t.Errorf("previousRelease(%s) = %q, %v; want %q", version, got, err, want)
		}
	}
}

// fakeRepo writes files (slash paths) into a new directory.
func fakeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestPackageAPI: the listing's lines for each kind of exported
// identifier; unexported ones and parameter names are left out (renaming
// a parameter changes no caller).
func TestPackageAPI(t *testing.T) {
	const src = `package p

const C = 3
const D Kind = 2
var V func(name string) error
var w int

type Kind int
type Alias = Kind
type S struct {
	Kind
	Name   string
	Hook   func(ctx *S, n int) bool
	hidden int
}
type I interface {
	Do(x []byte) (n int, err error)
	private()
}
type G[T any] struct{ Items []T }

func F(a, b int, rest ...string) (*S, error) { return nil, nil }
func Map[T, U any](in []T, f func(v T) U) []U { return nil }
func (s *S) Set(name string) {}
func (s S) Get() string { return s.Name }
func (s S) get() string { return "" }
func f() {}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := new(types.Config).Check("example.com/p", fset, []*ast.File{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := packageAPI(pkg)
	slices.Sort(got)
	want := []string{
		"const C untyped int = 3",
		"const D Kind = 2",
		"func F(int, int, ...string) (*S, error)",
		"func Map[T any, U any]([]T, func(T) U) []U",
		"method (*S) Set(string)",
		"method (S) Get() string",
		"type Alias = Kind",
		"type G[T any] struct",
		"type G[T any] struct, Items []T",
		"type I interface",
		"type I interface, Do([]byte) (int, error)",
		"type I interface, unexported methods",
		"type Kind int",
		"type S struct",
		"type S struct, Hook func(*S, int) bool",
		"type S struct, Name string",
		"type S struct, embedded Kind",
		"var V func(string) error",
	}
	for i := range want {
		want[i] = "pkg example.com/p, " + want[i]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("packageAPI:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAPIReport: the API diff against the previous release's frozen
// listing, and a released version's listing kept exactly.
func TestAPIReport(t *testing.T) {
	root := fakeRepo(t, map[string]string{
		"api/v0.1.0.txt": "# header\npkg p, func A()\npkg p, func B()\n",
	})
	for _, c := range []struct {
		version string
		cur     []string
		ok      bool
		report  string
	}{
		{"v0.1.0", []string{"pkg p, func A()", "pkg p, func B()"}, true, "no release before v0.1.0"},
		{"v0.1.0", []string{"pkg p, func A()", "pkg p, func B()", "pkg p, func C()"}, false, ""}, // released: frozen
		{"v0.1.1", []string{"pkg p, func A()", "pkg p, func B()", "pkg p, func C()"}, true, "+ pkg p, func C()"},
		{"v0.1.1", []string{"pkg p, func A()"}, false, "- pkg p, func B()"},
		{"v0.2.0", []string{"pkg p, func A()"}, true, "- pkg p, func B()"},
	} {
		report, err := apiReport(root, c.version, c.cur)
		if (err == nil) != c.ok || !strings.Contains(report, c.report) {
			t.Errorf("%s %q: report %q, err %v; want ok %v and %q in the report", c.version, c.cur, report, err, c.ok, c.report)
		}
	}
}
