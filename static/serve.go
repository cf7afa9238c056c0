package static

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/riptide-http/riptide"
)

// pathBuf is the size of the stack buffer a request path is resolved into:
// the longest path resolve accepts plus "/" and the index file name.
const pathBuf = maxPath + 256

// ServeCtx serves the file the request path names. GET and HEAD only
// (405 otherwise). A refused or missing path is 404; a directory asked
// for without its trailing slash is redirected (301) to it. Errors (404,
// 405 with Allow, 416) are answered with Ctx.Error, so that
// Server.ErrorHandler shapes them as it does the router's.
func (h *Handler) ServeCtx(c *riptide.Ctx) {
	if m := c.Method(); string(m) != "GET" && string(m) != "HEAD" {
		c.SetHeader("Allow", "GET, HEAD")
		c.Error(http.StatusMethodNotAllowed, "405 method not allowed")
		return
	}
	p := c.Path()
	if pre := h.opt.StripPrefix; pre != "" {
		if !bytes.HasPrefix(p, []byte(pre)) || len(p) == len(pre) || p[len(pre)] != '/' {
			notFound(c)
			return
		}
		p = p[len(pre):]
	}
	var buf [pathBuf]byte
	rel, dir, ok := resolve(buf[:0:maxPath], p, h.opt.DotFiles)
	if !ok {
		notFound(c)
		return
	}
	if dir {
		h.serveDir(c, rel)
		return
	}
	e, isDir := h.load(rel)
	if isDir {
		// As net/http: a directory's relative links need the slash.
		loc := append(append([]byte(nil), c.Path()...), '/')
		if q := c.RawQuery(); q != nil {
			loc = append(append(loc, '?'), q...)
		}
		c.SetHeaderBytes("Location", loc)
		c.SetStatus(http.StatusMovedPermanently)
		return
	}
	if e == nil {
		notFound(c)
		return
	}
	h.serveFile(c, e)
	e.release()
}

// serveDir serves a request for a directory (trailing slash): its index
// file, or its listing when Browse is on.
func (h *Handler) serveDir(c *riptide.Ctx, rel []byte) {
	if !h.opt.NoIndex {
		irel := rel
		if len(irel) > 0 {
			irel = append(irel, '/')
		}
		irel = append(irel, h.index...)
		if e, _ := h.load(irel); e != nil {
			h.serveFile(c, e)
			e.release()
			return
		}
		rel = irel[:len(rel)]
	}
	e, isDir := h.load(rel)
	if e != nil {
		e.release() // a file asked for as a directory
	}
	if !isDir || !h.opt.Browse {
		notFound(c)
		return
	}
	h.list(c, string(rel))
}

func notFound(c *riptide.Ctx) { c.Error(http.StatusNotFound, "404 page not found") }

// serveFile answers with e (or its pre-compressed sibling): conditional
// requests, then ranges, then the body with sendfile.
func (h *Handler) serveFile(c *riptide.Ctx, e *file) {
	v, enc := e, ""
	if e.br != nil || e.gz != nil {
		c.SetHeader("Vary", "Accept-Encoding")
		ae := c.Header("Accept-Encoding")
		switch {
		case e.br != nil && accepts(ae, "br"):
			v, enc = e.br, "br"
		case e.gz != nil && accepts(ae, "gzip"):
			v, enc = e.gz, "gzip"
		}
	}
	c.SetHeader("ETag", v.etag)
	if v.cacheControl != "" {
		c.SetHeader("Cache-Control", v.cacheControl)
	}
	c.SetHeader("Last-Modified", v.lastModified)
	if st := precondition(c, v); st != 0 {
		if st == http.StatusNotModified {
			// RFC 9110 §15.4.5: the ETag is enough (as net/http).
			c.DelHeader("Last-Modified")
		}
		c.SetStatus(st)
		return
	}
	if enc != "" {
		c.SetHeader("Content-Encoding", enc)
	} else {
		c.SetHeader("Accept-Ranges", "bytes")
		if rh := c.Header("Range"); rh != nil && ifRange(c, v) {
			h.serveRanges(c, v, rh)
			return
		}
	}
	c.SetContentType(v.ctype)
	c.SendFile(v.f, 0, v.size)
}

// accepts reports whether Accept-Encoding ae allows coding (or "*") with
// a q-value above zero.
func accepts(ae []byte, coding string) bool {
	star := false
	for len(ae) > 0 {
		var item []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			item, ae = ae[:i], ae[i+1:]
		} else {
			item, ae = ae, nil
		}
		name, params, _ := bytes.Cut(item, []byte(";"))
		name = bytes.TrimSpace(name)
		ok := qNonZero(params)
		if bytes.EqualFold(name, []byte(coding)) {
			return ok
		}
		if string(name) == "*" {
			star = ok
		}
	}
	return star
}

// qNonZero reports whether the parameters ("q=0.5") leave q above zero.
func qNonZero(params []byte) bool {
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte(";"))
		p = bytes.TrimSpace(p)
		if len(p) >= 2 && p[0]|0x20 == 'q' && p[1] == '=' {
			for _, d := range p[2:] {
				if d >= '1' && d <= '9' {
					return true
				}
			}
			return false
		}
	}
	return true
}

// precondition evaluates the conditional request headers in RFC 9110
// §13.2.2 order and returns 304, 412 or 0 (serve the file).
func precondition(c *riptide.Ctx, v *file) int {
	if im := c.Header("If-Match"); im != nil {
		if !etagMatch(im, v.etag, true) {
			return http.StatusPreconditionFailed
		}
	} else if ius := c.Header("If-Unmodified-Since"); ius != nil {
		if t, ok := parseTime(ius); ok && v.mod.Truncate(time.Second).After(t) {
			return http.StatusPreconditionFailed
		}
	}
	if inm := c.Header("If-None-Match"); inm != nil {
		if etagMatch(inm, v.etag, false) {
			return http.StatusNotModified // only GET and HEAD get here
		}
	} else if ims := c.Header("If-Modified-Since"); ims != nil {
		if string(ims) == v.lastModified {
			return http.StatusNotModified
		}
		if t, ok := parseTime(ims); ok && !v.mod.Truncate(time.Second).After(t) {
			return http.StatusNotModified
		}
	}
	return 0
}

// etagMatch reports whether the If-Match/If-None-Match list matches etag
// ("*" matches any). strong: a weak tag (ours always are) never matches,
// as RFC 9110 §8.8.3.2 requires for If-Match.
func etagMatch(list []byte, etag string, strong bool) bool {
	list = bytes.TrimSpace(list)
	if string(list) == "*" {
		return true
	}
	weak := len(etag) > 2 && etag[:2] == "W/"
	if strong && weak {
		return false
	}
	opaque := etag
	if weak {
		opaque = etag[2:]
	}
	for len(list) > 0 {
		list = bytes.TrimLeft(list, " \t,")
		isWeak := bytes.HasPrefix(list, []byte("W/"))
		if isWeak {
			list = list[2:]
		}
		if len(list) == 0 || list[0] != '"' {
			return false
		}
		end := bytes.IndexByte(list[1:], '"')
		if end < 0 {
			return false
		}
		tag := list[:end+2]
		list = list[end+2:]
		if string(tag) == opaque && !(strong && isWeak) {
			return true
		}
	}
	return false
}

// ifRange reports whether a Range header may be honoured: no If-Range, or
// an If-Range that still describes the file. An entity tag must match
// strongly (ours are weak: never); a date must equal the modification
// time to the second (as net/http allows).
func ifRange(c *riptide.Ctx, v *file) bool {
	ir := c.Header("If-Range")
	if ir == nil {
		return true
	}
	if len(ir) > 0 && (ir[0] == '"' || bytes.HasPrefix(ir, []byte("W/"))) {
		return etagMatch(ir, v.etag, true)
	}
	if string(ir) == v.lastModified {
		return true
	}
	t, ok := parseTime(ir)
	return ok && v.mod.Truncate(time.Second).Equal(t)
}

// parseTime parses an HTTP date in any of the three formats.
func parseTime(b []byte) (time.Time, bool) {
	t, err := http.ParseTime(string(b))
	return t, err == nil && !t.IsZero()
}

// appendRange appends "bytes first-last/size" to dst.
func appendRange(dst []byte, start, length, size int64) []byte {
	dst = append(dst, "bytes "...)
	dst = strconv.AppendInt(dst, start, 10)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, start+length-1, 10)
	dst = append(dst, '/')
	return strconv.AppendInt(dst, size, 10)
}
