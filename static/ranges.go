package static

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/riptide-http/riptide"
)

// maxRanges bounds the ranges of one request; more are answered with the
// whole file, so that a request cannot make the server send thousands of
// tiny parts.
const maxRanges = 32

// byteRange is a satisfiable range: length bytes from start.
type byteRange struct{ start, length int64 }

// Range header outcomes besides a list of ranges.
const (
	rangesOK        = iota
	rangesMalformed // 416
	rangesNoOverlap // 416 with Content-Range: bytes */size
)

// parseRanges parses a Range header against a file of size bytes, as
// net/http's ServeContent does: ranges that start past the end are
// dropped; if that leaves none the range is unsatisfiable
// (rangesNoOverlap); a malformed bytes range is rangesMalformed. A header
// with too many ranges, or whose ranges add up to more than the file, or
// in another unit than bytes (RFC 9110 §14.2: ignored; net/http answers
// 416), gives nil: serve the file whole.
func parseRanges(dst []byteRange, h []byte, size int64) (rs []byteRange, outcome int) {
	spec, found := bytes.CutPrefix(h, []byte("bytes="))
	if !found {
		return nil, rangesOK
	}
	rs = dst[:0]
	noOverlap := false
	var sum int64
	for len(spec) > 0 {
		var item []byte
		item, spec, _ = bytes.Cut(spec, []byte(","))
		item = bytes.Trim(item, " \t")
		if len(item) == 0 {
			continue
		}
		first, last, dash := bytes.Cut(item, []byte("-"))
		if !dash {
			return nil, rangesMalformed
		}
		first, last = bytes.Trim(first, " \t"), bytes.Trim(last, " \t")
		var r byteRange
		if len(first) == 0 {
			n, ok := parseInt(last)
			if !ok {
				return nil, rangesMalformed
			}
			if n == 0 {
				noOverlap = true // RFC 9110 §14.1.3: "-0" is unsatisfiable
				continue
			}
			n = min(n, size)
			r = byteRange{size - n, n}
		} else {
			i, ok := parseInt(first)
			if !ok {
				return nil, rangesMalformed
			}
			if i >= size {
				noOverlap = true
				continue
			}
			r.start = i
			if len(last) == 0 {
				r.length = size - i
			} else {
				j, ok := parseInt(last)
				if !ok || j < i {
					return nil, rangesMalformed
				}
				r.length = min(j, size-1) - i + 1
			}
		}
		if len(rs) == maxRanges {
			return nil, rangesOK
		}
		rs = append(rs, r)
		sum += r.length
	}
	switch {
	case len(rs) == 0 && noOverlap:
		return nil, rangesNoOverlap
	case sum > size:
		return nil, rangesOK
	}
	return rs, rangesOK // none for "bytes=" alone: the whole file
}

// parseInt parses 1 to 18 decimal digits.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// serveRanges answers a GET with a Range header: 206 with one range, or a
// multipart/byteranges body with several; 416 when unsatisfiable; the
// whole file when the ranges are not worth honouring.
func (h *Handler) serveRanges(c *riptide.Ctx, v *file, rh []byte) {
	var arr [4]byteRange
	rs, outcome := parseRanges(arr[:0], rh, v.size)
	var b [96]byte
	switch {
	case outcome != rangesOK:
		// The validators describe the file, not this error (as net/http).
		for _, k := range [...]string{"ETag", "Last-Modified", "Cache-Control", "Accept-Ranges"} {
			c.DelHeader(k)
		}
		if outcome == rangesNoOverlap {
			c.SetHeaderBytes("Content-Range", strconv.AppendInt(append(b[:0], "bytes */"...), v.size, 10))
		}
		c.Error(http.StatusRequestedRangeNotSatisfiable, "416 requested range not satisfiable")
	case len(rs) == 0:
		c.SetContentType(v.ctype)
		c.SendFile(v.f, 0, v.size)
	case len(rs) == 1:
		r := rs[0]
		c.SetHeaderBytes("Content-Range", appendRange(b[:0], r.start, r.length, v.size))
		c.SetContentType(v.ctype)
		c.SetStatus(http.StatusPartialContent)
		c.SendFile(v.f, r.start, r.length)
	default:
		h.serveMultipart(c, v, rs)
	}
}

// serveMultipart sends several ranges as multipart/byteranges (RFC 9110
// §14.6), each part's bytes with sendfile, with an exact Content-Length.
func (h *Handler) serveMultipart(c *riptide.Ctx, v *file, rs []byteRange) {
	var b [256]byte
	total := int64(len(h.closeDelim))
	for i, r := range rs {
		total += int64(len(h.partHead(b[:0], i, r, v))) + r.length
	}
	c.SetContentType("multipart/byteranges; boundary=" + h.boundary)
	c.SetContentLength(total)
	c.SetStatus(http.StatusPartialContent)
	for i, r := range rs {
		if _, err := c.Write(h.partHead(b[:0], i, r, v)); err != nil {
			return
		}
		if _, err := c.SendFile(v.f, r.start, r.length); err != nil {
			return
		}
	}
	c.WriteString(h.closeDelim)
}

// partHead appends the delimiter and header lines of part i.
func (h *Handler) partHead(dst []byte, i int, r byteRange, v *file) []byte {
	if i > 0 {
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "--"...)
	dst = append(dst, h.boundary...)
	dst = append(dst, "\r\nContent-Range: "...)
	dst = appendRange(dst, r.start, r.length, v.size)
	dst = append(dst, "\r\nContent-Type: "...)
	dst = append(dst, v.ctype...)
	return append(dst, "\r\n\r\n"...)
}
