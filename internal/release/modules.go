package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// corePath is the core module's path; every module of the repository has
// it as its path or a prefix of it.
const corePath = "github.com/riptide-http/riptide"

// A Module is one Go module of the repository.
type Module struct {
	Path string // module path
	Dir  string // directory, relative to the repository root ("." for the core)
}

// findRoot returns the repository root: the nearest directory at or
// above dir whose go.mod declares corePath.
func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modfile.ModulePath(data) == corePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no directory at or above %s holds the go.mod of %s", dir, corePath)
		}
		d = parent
	}
}

// readVersion returns the const Version of the core package (version.go
// at the repository root): the version of every module in the repository.
func readVersion(root string) (string, error) {
	name := filepath.Join(root, "version.go")
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != "Version" || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return "", fmt.Errorf("%s: Version is not a string literal", name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					return "", err
				}
				if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" {
					return "", fmt.Errorf("%s: Version %q is not a canonical semantic version (vMAJOR.MINOR.PATCH)", name, v)
				}
				return v, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no const Version", name)
}

// findModules returns every module of the repository, sorted by path: each
// directory holding a go.mod whose module path is corePath or below it,
// outside testdata and hidden directories (the go command ignores those).
func findModules(root string) ([]Module, error) {
	var mods []Module
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mp := modfile.ModulePath(data)
		if mp != corePath && !strings.HasPrefix(mp, corePath+"/") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if want := strings.TrimPrefix(strings.TrimPrefix(mp, corePath), "/"); rel != want && !(rel == "." && want == "") {
			return fmt.Errorf("%s: module %s is not in the directory its path names (%s)", p, mp, want)
		}
		mods = append(mods, Module{Path: mp, Dir: rel})
		return nil
	})
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, err
}

// isRiptide reports whether path is a module of this repository.
func isRiptide(path string) bool {
	return path == corePath || strings.HasPrefix(path, corePath+"/")
}

// repoFiles returns the files a release of the working tree holds: those
// git tracks and the untracked ones it does not ignore (a tag publishes
// what is committed; the working tree's are checked so that a new file is
// caught before its commit), as slash paths relative to root. Outside a
// git checkout it returns every regular file below root.
func repoFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if _, serr := os.Stat(filepath.Join(root, ".git")); serr == nil {
			return nil, fmt.Errorf("git ls-files: %v: %s", err, stderr.Bytes())
		}
		var files []string
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
			return err
		})
		return files, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		// A tracked file deleted in the working tree is not released.
		if _, err := os.Lstat(filepath.Join(root, f)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// moduleFiles returns the files of m among files (repoFiles): those in
// its directory and not in the directory of another module below it.
func moduleFiles(m Module, mods []Module, files []string) []string {
	prefix := m.Dir + "/"
	if m.Dir == "." {
		prefix = ""
	}
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(f, prefix) {
			continue
		}
		nested := false
		for _, o := range mods {
			if o.Dir != m.Dir && o.Dir != "." && strings.HasPrefix(o.Dir+"/", prefix) && strings.HasPrefix(f, o.Dir+"/") {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, strings.TrimPrefix(f, prefix))
		}
	}
	return out
}

// zipFile is one file of a module zip (golang.org/x/mod/zip.File).
type zipFile struct {
	path string // in the module
	abs  string // on disk
}

func (f zipFile) Path() string                 { return f.path }
func (f zipFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f zipFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
