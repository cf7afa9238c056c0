package main

import (
	"bufio"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
	"golang.org/x/tools/go/packages"
)

// apiFile is the listing of the working tree's exported API, one line per
// exported identifier, in the manner of Go's api/*.txt; api/vX.Y.Z.txt is
// the frozen listing of release vX.Y.Z.
const apiFile = "api/next.txt"

// apiListing returns the exported API of every package that a consumer
// can import from the repository's library modules (not internal, not
// main, not testdata), sorted: lines such as
//
//	pkg github.com/riptide-http/riptide, func FromHTTP(net/http.Handler) Handler
//	pkg github.com/riptide-http/riptide, method (*Ctx) Path() []uint8
//	pkg github.com/riptide-http/riptide, type Server struct, Addr string
//
// The packages are type-checked for linux/amd64 (files for other
// platforms must declare the same exported API; go vet for each platform
// in test.sh keeps them building).
func apiListing(root string, mods []Module) ([]string, error) {
	var lines []string
	for _, m := range mods {
		if !library(m) {
			continue
		}
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedTypes,
			Dir:  filepath.Join(root, m.Dir),
			Env:  append(os.Environ(), "GOOS=linux", "GOARCH=amd64"),
		}
		pkgs, err := packages.Load(cfg, "./...")
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", m.Path, err)
		}
		for _, p := range pkgs {
			if len(p.Errors) > 0 {
				return nil, fmt.Errorf("module %s: package %s: %v", m.Path, p.PkgPath, p.Errors[0])
			}
			if p.Name == "main" || p.Types == nil || isInternal(p.PkgPath) || !strings.HasPrefix(p.PkgPath+"/", m.Path+"/") {
				continue
			}
			lines = append(lines, packageAPI(p.Types)...)
		}
	}
	sort.Strings(lines)
	return dedup(lines), nil
}

// notLibraries are the top directories of modules that are not libraries
// for consumers but tests, benchmarks, examples and tools: their exported
// identifiers are not API.
var notLibraries = []string{"bench", "ecosystem", "examples", "internal"}

// library reports whether m is a library module, whose exported API the
// listing holds (the core, compress, http3, and any new one).
func library(m Module) bool {
	top, _, _ := strings.Cut(m.Dir, "/")
	for _, n := range notLibraries {
		if top == n {
			return false
		}
	}
	return true
}

func isInternal(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

func dedup(s []string) []string {
	out := s[:0]
	for i, l := range s {
		if i == 0 || l != s[i-1] {
			out = append(out, l)
		}
	}
	return out
}

// packageAPI lists p's exported identifiers.
func packageAPI(p *types.Package) []string {
	qual := func(o *types.Package) string {
		if o == p {
			return ""
		}
		return o.Path()
	}
	prefix := "pkg " + p.Path() + ", "
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }
	scope := p.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			if p.Path() == corePath && name == "Version" {
				// Its value changes with every release, by design.
				add("const %s %s", name, typeString(o.Type(), qual))
				break
			}
			add("const %s %s = %s", name, typeString(o.Type(), qual), o.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, typeString(o.Type(), qual))
		case *types.Func:
			add("func %s%s", name, signature(o, qual))
		case *types.TypeName:
			lines = append(lines, typeAPI(prefix, o, qual)...)
		}
	}
	return lines
}

// signature is a function's type parameters and signature, without func
// and the names of parameters and results (renaming one changes no
// caller): "[T any](int, ...string) (T, error)".
func signature(f *types.Func, qual types.Qualifier) string {
	sig := f.Signature()
	tp := ""
	if tps := sig.TypeParams(); tps.Len() > 0 {
		var ps []string
		for i := range tps.Len() {
			ps = append(ps, tps.At(i).Obj().Name()+" "+types.TypeString(tps.At(i).Constraint(), qual))
		}
		tp = "[" + strings.Join(ps, ", ") + "]"
	}
	return tp + sigString(sig, qual)
}

// sigString is sig without func and names: "(int, ...string) (T, error)".
func sigString(sig *types.Signature, qual types.Qualifier) string {
	tuple := func(t *types.Tuple, variadic bool) []string {
		var out []string
		for i := range t.Len() {
			typ := t.At(i).Type()
			if variadic && i == t.Len()-1 {
				out = append(out, "..."+typeString(typ.(*types.Slice).Elem(), qual))
			} else {
				out = append(out, typeString(typ, qual))
			}
		}
		return out
	}
	s := "(" + strings.Join(tuple(sig.Params(), sig.Variadic()), ", ") + ")"
	switch res := tuple(sig.Results(), false); len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	return s
}

// typeString is types.TypeString without the parameter names of function
// types in it (func(name string) is func(string)).
func typeString(t types.Type, qual types.Qualifier) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + sigString(t, qual)
	case *types.Pointer:
		return "*" + typeString(t.Elem(), qual)
	case *types.Slice:
		return "[]" + typeString(t.Elem(), qual)
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), typeString(t.Elem(), qual))
	case *types.Map:
		return "map[" + typeString(t.Key(), qual) + "]" + typeString(t.Elem(), qual)
	case *types.Chan:
		dir := map[types.ChanDir]string{types.SendRecv: "chan ", types.SendOnly: "chan<- ", types.RecvOnly: "<-chan "}[t.Dir()]
		if e, ok := t.Elem().(*types.Chan); ok && e.Dir() == types.RecvOnly && t.Dir() != types.RecvOnly {
			return dir + "(" + typeString(e, qual) + ")"
		}
		return dir + typeString(t.Elem(), qual)
	}
	return types.TypeString(t, qual)
}

// typeAPI lists an exported type: its kind or underlying type, its
// exported fields or interface methods, and its exported methods.
func typeAPI(prefix string, tn *types.TypeName, qual types.Qualifier) []string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }
	name := tn.Name()
	if tn.IsAlias() {
		add("type %s = %s", name, typeString(types.Unalias(tn.Type()), qual))
		return lines
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return lines
	}
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name()+" "+types.TypeString(tp.At(i).Constraint(), qual))
		}
		name += "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", name)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add("type %s struct, embedded %s", name, typeString(f.Type(), qual))
			} else {
				add("type %s struct, %s %s", name, f.Name(), typeString(f.Type(), qual))
			}
		}
	case *types.Interface:
		add("type %s interface", name)
		for i := range u.NumEmbeddeds() {
			add("type %s interface, embedded %s", name, types.TypeString(u.EmbeddedType(i), qual))
		}
		for i := range u.NumExplicitMethods() {
			m := u.ExplicitMethod(i)
			if m.Exported() {
				add("type %s interface, %s%s", name, m.Name(), sigString(m.Signature(), qual))
			} else {
				add("type %s interface, unexported methods", name)
			}
		}
	default:
		add("type %s %s", name, typeString(u, qual))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		recv := tn.Name()
		if _, ptr := m.Signature().Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		add("method (%s) %s%s", recv, m.Name(), sigString(m.Signature(), qual))
	}
	return lines
}

// readAPI reads a listing written by writeAPI.
func readAPI(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// writeAPI writes a listing, with a header saying how it is made.
func writeAPI(name string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# The exported API of riptide's modules; made by `go run ./internal/release api -w`.\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}

// diffAPI returns the lines of old missing from cur (removed or changed:
// incompatible for a consumer) and the lines of cur missing from old
// (added). Both inputs are sorted.
func diffAPI(old, cur []string) (removed, added []string) {
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i] < cur[j]):
			removed = append(removed, old[i])
			i++
		case i == len(old) || cur[j] < old[i]:
			added = append(added, cur[j])
			j++
		default:
			i++
			j++
		}
	}
	return removed, added
}

// previousRelease returns the newest frozen listing api/vX.Y.Z.txt of a
// release before version, "" when there is none.
func previousRelease(root, version string) (string, error) {
	names, err := filepath.Glob(filepath.Join(root, "api", "v*.txt"))
	if err != nil {
		return "", err
	}
	prev := ""
	for _, n := range names {
		v := strings.TrimSuffix(filepath.Base(n), ".txt")
		if semver.IsValid(v) && semver.Compare(v, version) < 0 && (prev == "" || semver.Compare(v, prev) > 0) {
			prev = v
		}
	}
	return prev, nil
}

// compatible returns an error when the change from release prev to version
// removes or changes API (removed lines) that the compatibility policy
// (README.md, "Versions and compatibility") keeps: from v1 on, only a new
// major version may; before v1, a new minor version may, a patch release
// may not.
func compatible(prev, version string, removed []string) error {
	if len(removed) == 0 {
		return nil
	}
	bump := semver.Major(version) != semver.Major(prev)
	if semver.Major(prev) == "v0" {
		bump = semver.MajorMinor(version) != semver.MajorMinor(prev)
	}
	if bump {
		return nil
	}
	return fmt.Errorf("%s removes or changes %d API lines of %s, which only a new %s version may:\n\t%s",
		version, len(removed), prev, map[bool]string{true: "minor", false: "major"}[semver.Major(prev) == "v0"],
		strings.Join(removed, "\n\t"))
}
