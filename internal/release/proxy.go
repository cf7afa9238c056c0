package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// zipFiles returns m's files as golang.org/x/mod/zip files.
func zipFiles(root string, m Module, mods []Module, files []string) []zip.File {
	var zf []zip.File
	for _, f := range moduleFiles(m, mods, files) {
		zf = append(zf, zipFile{path: f, abs: filepath.Join(root, m.Dir, filepath.FromSlash(f))})
	}
	return zf
}

// checkZip reports why m's files cannot make a module zip (file names
// the module zip rules refuse, such as "nul" or "aux" which Windows
// reserves, names that differ only in case, a zip over the size limits),
// nil when they can.
func checkZip(root string, m Module, mods []Module, files []string) error {
	cf, err := zip.CheckFiles(zipFiles(root, m, mods, files))
	if err != nil {
		return fmt.Errorf("module %s (%s): %w", m.Path, m.Dir, err)
	}
	return cf.Err()
}

// buildZip returns the zip of m at version made from the working tree.
func buildZip(root string, m Module, mods []Module, files []string, version string) ([]byte, error) {
	var buf bytes.Buffer
	mv := module.Version{Path: m.Path, Version: version}
	if err := zip.Create(&buf, mv, zipFiles(root, m, mods, files)); err != nil {
		return nil, fmt.Errorf("module %s (%s): %w", m.Path, m.Dir, err)
	}
	return buf.Bytes(), nil
}

// writeProxy makes dir a file-based module proxy (GOPROXY=file://dir) that
// serves every module of the repository at version, made from the working
// tree: for each, @v/list, @v/VERSION.info, .mod and .zip, laid out as the
// GOPROXY protocol says (module paths and versions case-escaped).
func writeProxy(root, dir, version string) ([]Module, error) {
	mods, err := findModules(root)
	if err != nil {
		return nil, err
	}
	files, err := repoFiles(root)
	if err != nil {
		return nil, err
	}
	ev, err := module.EscapeVersion(version)
	if err != nil {
		return nil, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		ep, err := module.EscapePath(m.Path)
		if err != nil {
			return nil, err
		}
		z, err := buildZip(root, m, mods, files, version)
		if err != nil {
			return nil, err
		}
		gomod, err := os.ReadFile(filepath.Join(root, m.Dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(ep), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return nil, err
		}
		for name, data := range map[string][]byte{
			"list":       []byte(version + "\n"),
			ev + ".info": info,
			ev + ".mod":  gomod,
			ev + ".zip":  z,
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return mods, nil
}
