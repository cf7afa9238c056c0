package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// localPath is the go.work path of a module directory ("./", "./http3").
func localPath(dir string) string {
	if dir == "." {
		return "./"
	}
	return "./" + dir
}

// checkModFiles returns what keeps the repository's go.mod files and
// go.work from the release rules:
//   - a module's require of another riptide module names version, the
//     version they are released with (a consumer resolves exactly that);
//   - no go.mod replaces a riptide module (a consumer ignores the line, and
//     `go install pkg@version` refuses a module that has one);
//   - go.work uses every module and replaces each at version with its
//     directory, so that development builds the working tree (the go
//     command otherwise reads the go.mod of the required version of a
//     workspace module from the module proxy).
func checkModFiles(root, version string, mods []Module) []error {
	var errs []error
	for _, m := range mods {
		name := filepath.Join(root, m.Dir, "go.mod")
		f, err := parseMod(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range f.Require {
			if isRiptide(r.Mod.Path) && r.Mod.Version != version {
				errs = append(errs, fmt.Errorf("%s: require %s %s, want %s (Version in version.go; go run ./internal/release sync)", rel(root, name), r.Mod.Path, r.Mod.Version, version))
			}
		}
		for _, r := range f.Replace {
			if isRiptide(r.Old.Path) {
				errs = append(errs, fmt.Errorf("%s: replace %s: riptide modules are developed through go.work, never replaced in a go.mod (go run ./internal/release sync)", rel(root, name), r.Old.Path))
			}
		}
	}
	name := filepath.Join(root, "go.work")
	w, err := parseWork(name)
	if err != nil {
		return append(errs, err)
	}
	used := map[string]bool{}
	for _, u := range w.Use {
		used[filepath.Clean(u.Path)] = true
	}
	replaced := map[string]string{}
	for _, r := range w.Replace {
		if r.Old.Version == version {
			replaced[r.Old.Path] = filepath.Clean(r.New.Path)
		}
	}
	for _, m := range mods {
		if !used[filepath.Clean(m.Dir)] {
			errs = append(errs, fmt.Errorf("go.work does not use module %s (%s) (go run ./internal/release sync)", m.Path, m.Dir))
		}
		if d, ok := replaced[m.Path]; !ok || d != filepath.Clean(m.Dir) {
			errs = append(errs, fmt.Errorf("go.work does not replace %s %s => %s (go run ./internal/release sync)", m.Path, version, localPath(m.Dir)))
		}
	}
	return errs
}

// syncModFiles rewrites the go.mod files and go.work to follow the rules
// checkModFiles checks, and returns the files it changed.
func syncModFiles(root, version string, mods []Module) ([]string, error) {
	var changed []string
	for _, m := range mods {
		name := filepath.Join(root, m.Dir, "go.mod")
		f, err := parseMod(name)
		if err != nil {
			return changed, err
		}
		for _, r := range f.Replace {
			if isRiptide(r.Old.Path) {
				if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
					return changed, err
				}
			}
		}
		for _, r := range f.Require {
			if isRiptide(r.Mod.Path) && r.Mod.Version != version {
				if err := f.AddRequire(r.Mod.Path, version); err != nil {
					return changed, err
				}
			}
		}
		ok, err := writeIfChanged(name, f.Format)
		if err != nil {
			return changed, err
		}
		if ok {
			changed = append(changed, rel(root, name))
		}
	}
	name := filepath.Join(root, "go.work")
	goLine := "go 1.26.0"
	if w, err := parseWork(name); err == nil && w.Go != nil {
		goLine = "go " + w.Go.Version
	} else if err != nil && !os.IsNotExist(err) {
		return changed, err
	}
	ok, err := writeIfChanged(name, func() ([]byte, error) { return workFile(goLine, version, mods), nil })
	if ok {
		changed = append(changed, "go.work")
	}
	return changed, err
}

// workFile is the go.work that uses every module and replaces each at
// version with its directory.
func workFile(goLine, version string, mods []Module) []byte {
	var b strings.Builder
	b.WriteString("// The workspace of riptide's modules: development builds the working\n" +
		"// tree. Each module requires its siblings at the version they are\n" +
		"// released with (Version in version.go), which the replace lines map\n" +
		"// to their directories. Written by `go run ./internal/release sync`.\n\n")
	b.WriteString(goLine + "\n\nuse (\n")
	for _, m := range mods {
		b.WriteString("\t" + useDir(m.Dir) + "\n")
	}
	b.WriteString(")\n\nreplace (\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "\t%s %s => %s\n", m.Path, version, localPath(m.Dir))
	}
	b.WriteString(")\n")
	return []byte(b.String())
}

// useDir is the go.work use path of a module directory.
func useDir(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir
}

func parseMod(name string) (*modfile.File, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, data, nil)
}

func parseWork(name string) (*modfile.WorkFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.ParseWork(name, data, nil)
}

// writeIfChanged writes format's bytes to name when they differ from its
// content, and reports whether it did.
func writeIfChanged(name string, format func() ([]byte, error)) (bool, error) {
	data, err := format()
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(name)
	if err == nil && string(old) == string(data) {
		return false, nil
	}
	return true, os.WriteFile(name, data, 0o644)
}

// rel returns name relative to root, as a slash path.
func rel(root, name string) string {
	r, err := filepath.Rel(root, name)
	if err != nil {
		return name
	}
	return filepath.ToSlash(r)
}
