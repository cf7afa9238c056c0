package static

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riptide-http/riptide"
)

// Options configure a Handler. The zero value serves files and index.html
// from the root, refuses directory listings, hidden files and symbolic
// links that leave the root, and sends no Cache-Control.
type Options struct {
	// Index is the file served for a directory; "" means "index.html".
	// Set NoIndex to serve none.
	Index   string
	NoIndex bool
	// Browse lists a directory that has no index file (HTML). Off by
	// default: a directory without an index is 404.
	Browse bool
	// DotFiles serves names that start with '.' (".well-known"); by
	// default they are 404, so ".git" or ".env" left in the root stay
	// private.
	DotFiles bool
	// FollowSymlinks follows symbolic links that point outside the root.
	// By default the root is opened with os.OpenRoot and a link that
	// leaves it is refused (links inside the root work).
	FollowSymlinks bool
	// Precompressed serves name.br or name.gz, when present next to name
	// and accepted by the client's Accept-Encoding, in place of name, with
	// name's Content-Type and Vary: Accept-Encoding. Range requests get
	// the whole compressed file (200).
	Precompressed bool
	// CacheControl is matched in order against the request's path
	// relative to the root; the first rule that matches sets the
	// Cache-Control header. None matching: no header.
	CacheControl []CacheRule
	// StripPrefix is removed from the request path before it is resolved
	// ("/assets" serves /assets/app.js from <root>/app.js); a path without
	// it is 404.
	StripPrefix string
	// MaxFiles bounds how many open files are kept (default 1024).
	MaxFiles int
	// Recheck is how long an open file is served before its path is
	// stat'ed again to see whether it changed (default 1s; negative: every
	// request).
	Recheck time.Duration
}

// CacheRule sets Cache-Control for the files it matches: by path prefix
// (relative to the root, no leading '/'), by extension (".css"), or both;
// a rule with neither matches everything.
type CacheRule struct {
	Prefix string
	Ext    string
	Value  string // e.g. "public, max-age=31536000, immutable"
}

// Handler serves the files under one directory. It is a riptide.Handler;
// create it with New.
type Handler struct {
	dir      string
	root     *os.Root // nil with FollowSymlinks
	opt      Options
	index    string
	recheck  int64
	files    cache
	boundary string // of multipart/byteranges bodies
	// closeDelim ends a multipart/byteranges body.
	closeDelim string
}

// New returns a Handler serving the directory dir.
func New(dir string, opt Options) (*Handler, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New("static: " + dir + " is not a directory")
	}
	h := &Handler{dir: abs, opt: opt, index: opt.Index}
	if h.index == "" {
		h.index = "index.html"
	}
	if strings.ContainsAny(h.index, "/\\") {
		return nil, errors.New("static: Index must be a file name")
	}
	if !opt.FollowSymlinks {
		if h.root, err = os.OpenRoot(abs); err != nil {
			return nil, err
		}
	}
	switch {
	case opt.Recheck == 0:
		h.recheck = int64(time.Second)
	case opt.Recheck > 0:
		h.recheck = int64(opt.Recheck)
	}
	h.files = cache{m: make(map[string]*file), max: opt.MaxFiles}
	if h.files.max <= 0 {
		h.files.max = 1024
	}
	var b [12]byte
	rand.Read(b[:])
	h.boundary = hex.EncodeToString(b[:])
	h.closeDelim = "\r\n--" + h.boundary + "--\r\n"
	return h, nil
}

// Close closes the cached files (and the root). Requests still running
// keep theirs open until they end.
func (h *Handler) Close() error {
	h.files.mu.Lock()
	for k, e := range h.files.m {
		delete(h.files.m, k)
		e.release()
	}
	h.files.mu.Unlock()
	if h.root != nil {
		return h.root.Close()
	}
	return nil
}

// open opens rel (relative to the root, slash-separated) without
// blocking, through os.Root unless symbolic links may leave the root.
func (h *Handler) open(rel string) (*os.File, error) {
	if rel == "" {
		rel = "."
	}
	if h.root != nil {
		return h.root.OpenFile(filepath.FromSlash(rel), openFlags, 0)
	}
	return os.OpenFile(filepath.Join(h.dir, filepath.FromSlash(rel)), openFlags, 0)
}

// stat stats rel the way open opens it.
func (h *Handler) stat(rel string) (fs.FileInfo, error) {
	if h.root != nil {
		return h.root.Stat(filepath.FromSlash(rel))
	}
	return os.Stat(filepath.Join(h.dir, filepath.FromSlash(rel)))
}

// cacheControl returns the Cache-Control value for rel, or "".
func (h *Handler) cacheControl(rel string) string {
	for _, r := range h.opt.CacheControl {
		if strings.HasPrefix(rel, r.Prefix) && strings.HasSuffix(rel, r.Ext) {
			return r.Value
		}
	}
	return ""
}

// load returns the file at rel with a hold, from the cache or opened now
// (nil, isDir when rel is a directory, nil, false when missing or not
// servable).
func (h *Handler) load(rel []byte) (e *file, isDir bool) {
	if e = h.files.get(rel); e != nil {
		if h.recheck > 0 && time.Now().UnixNano()-e.checked.Load() < h.recheck {
			return e, false
		}
		// Time to look again: is the path still this file?
		fi, err := h.stat(string(rel))
		if err == nil && fi.Mode().IsRegular() && fi.Size() == e.size && fi.ModTime().Equal(e.mod) {
			e.checked.Store(time.Now().UnixNano())
			return e, false
		}
		h.files.drop(string(rel), e)
		e.release()
	}
	name := string(rel)
	f, err := h.open(name)
	if err != nil {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, err == nil && fi.IsDir()
	}
	e = h.newFile(f, fi, name)
	if h.opt.Precompressed {
		e.br = h.sibling(name, ".br", e)
		e.gz = h.sibling(name, ".gz", e)
	}
	e.acquire() // the cache's hold
	h.files.put(name, e)
	return e, false
}

// sibling opens name+ext, a pre-compressed form of orig, or returns nil.
func (h *Handler) sibling(name, ext string, orig *file) *file {
	f, err := h.open(name + ext)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	e := h.newFile(f, fi, name)
	e.etag = e.etag[:len(e.etag)-1] + ext + `"` // never equal to orig's
	e.ctype, e.cacheControl = orig.ctype, orig.cacheControl
	return e
}

var _ riptide.Handler = (*Handler)(nil)
