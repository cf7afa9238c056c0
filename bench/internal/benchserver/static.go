package benchserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// ProfileStatic serves the files of the static workloads from StaticDir:
// GET /static/4k.txt and GET /static/1m.txt (text/plain), with each
// server's own static file handler (riptide's static package,
// http.FileServer, fasthttp.FS, nginx).
const ProfileStatic Profile = "static"

// StaticFile is one file of the static workloads.
type StaticFile struct {
	Path string // request path, also the path under StaticDir
	Size int
}

// StaticFiles are the files of the static workloads.
var StaticFiles = []StaticFile{{"/static/4k.txt", 4 << 10}, {"/static/1m.txt", 1 << 20}}

// StaticBody is the content of a static file of size bytes: printable
// ASCII, the same for every server.
func StaticBody(size int) []byte {
	return bytes.Repeat([]byte("riptide static!\n"), size/16)
}

// StaticDir writes the static files under dir (created if need be, e.g.
// a temporary directory), each by rename so that a server never sees a
// partial file, and returns dir.
func StaticDir(dir string) (string, error) {
	for _, f := range StaticFiles {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if fi, err := os.Stat(p); err == nil && fi.Size() == int64(f.Size) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		tmp := fmt.Sprintf("%s.%d", p, os.Getpid())
		if err := os.WriteFile(tmp, StaticBody(f.Size), 0o644); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, p); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// DefaultStaticDir is where the Go servers keep the static files: one
// directory under os.TempDir shared by every run (the files are always
// the same).
func DefaultStaticDir() string {
	dir, err := StaticDir(filepath.Join(os.TempDir(), "riptide-bench-static"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "static files:", err)
		os.Exit(1)
	}
	return dir
}
