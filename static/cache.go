package static

import (
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// file is an open regular file with what its responses need, computed
// once: it is shared by every request for the path until it is found
// changed or evicted. refs counts the cache's hold and each request's, so
// that the descriptor is closed only when no SendFile uses it.
type file struct {
	f            *os.File
	size         int64
	mod          time.Time
	etag         string // weak: W/"size-mtime"
	lastModified string // http.TimeFormat
	ctype        string
	cacheControl string
	// br and gz are the pre-compressed siblings (name.br, name.gz), nil
	// when absent or off.
	br, gz *file

	refs    atomic.Int32
	checked atomic.Int64 // unix nanoseconds of the last stat
}

func (e *file) acquire() { e.refs.Add(1) }

// release drops a hold; the last one closes the file and its siblings.
func (e *file) release() {
	if e.refs.Add(-1) == 0 {
		e.f.Close()
		if e.br != nil {
			e.br.release()
		}
		if e.gz != nil {
			e.gz.release()
		}
	}
}

// cache maps a resolved relative path to its open file.
type cache struct {
	mu  sync.RWMutex
	m   map[string]*file
	max int
}

// get returns the file for rel with a hold the caller releases, or nil.
// The map lookup with string(rel) does not allocate.
func (c *cache) get(rel []byte) *file {
	c.mu.RLock()
	e := c.m[string(rel)]
	if e != nil {
		e.acquire()
	}
	c.mu.RUnlock()
	return e
}

// put stores e under rel (replacing and releasing an older file), making
// room by dropping an arbitrary entry when full. e must carry one hold for
// the cache.
func (c *cache) put(rel string, e *file) {
	c.mu.Lock()
	if old := c.m[rel]; old != nil {
		old.release()
	} else if len(c.m) >= c.max {
		for k, v := range c.m {
			delete(c.m, k)
			v.release()
			break
		}
	}
	c.m[rel] = e
	c.mu.Unlock()
}

// drop removes rel's file if it is still e.
func (c *cache) drop(rel string, e *file) {
	c.mu.Lock()
	if c.m[rel] == e {
		delete(c.m, rel)
		e.release()
	}
	c.mu.Unlock()
}

// newFile describes an open regular file. The hold it starts with is the
// caller's.
func (h *Handler) newFile(f *os.File, fi os.FileInfo, rel string) *file {
	e := &file{f: f, size: fi.Size(), mod: fi.ModTime()}
	e.refs.Store(1)
	e.checked.Store(time.Now().UnixNano())
	e.etag = `W/"` + strconv.FormatInt(e.size, 16) + "-" + strconv.FormatInt(e.mod.UnixNano(), 16) + `"`
	e.lastModified = e.mod.UTC().Format(http.TimeFormat)
	e.ctype = mime.TypeByExtension(path.Ext(rel))
	if e.ctype == "" {
		var buf [512]byte
		n, _ := io.ReadFull(io.NewSectionReader(f, 0, e.size), buf[:])
		e.ctype = http.DetectContentType(buf[:n])
	}
	e.cacheControl = h.cacheControl(rel)
	return e
}
