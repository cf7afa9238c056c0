package probe

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// Response is one HTTP response read from the server.
type Response struct {
	Proto  string  // e.g. "HTTP/1.1"
	Status int     // status code
	Reason string  // reason phrase
	Header []Field // header fields in received order
	Body   []byte  // decoded body (chunked framing removed)
	// Incomplete is set when the connection ended or the deadline passed
	// before the whole body arrived.
	Incomplete bool
}

// Field is one response header field line.
type Field struct {
	Name, Value string
}

// Get returns the value of the first header field named name (compared case
// insensitively) and whether it was present.
func (r *Response) Get(name string) (string, bool) {
	for _, f := range r.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value, true
		}
	}
	return "", false
}

// hasToken reports whether a comma-separated header (e.g. Connection)
// contains tok, case-insensitively.
func (r *Response) hasToken(name, tok string) bool {
	for _, f := range r.Header {
		if !strings.EqualFold(f.Name, name) {
			continue
		}
		for _, p := range strings.Split(f.Value, ",") {
			if strings.EqualFold(strings.TrimSpace(p), tok) {
				return true
			}
		}
	}
	return false
}

// Limits on what the probe accepts from a server, so a misbehaving server
// cannot make it allocate without bound.
const (
	maxResponseHead = 1 << 20
	maxResponseBody = 16 << 20
)

var (
	errNeedMore    = errors.New("probe: need more bytes")
	errBadResponse = errors.New("probe: malformed response")
)

// parseHead parses a response head at the start of b. It returns the
// response (without body) and the length of the head, errNeedMore when the
// head is not complete yet, or errBadResponse. Bare LF line ends are
// tolerated: the probe judges servers, it does not police them here.
func parseHead(b []byte) (*Response, int, error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	n := end + 4
	if lf := bytes.Index(b, []byte("\n\n")); lf >= 0 && (end < 0 || lf < end) {
		end, n = lf, lf+2
	}
	if end < 0 {
		if len(b) > maxResponseHead {
			return nil, 0, errBadResponse
		}
		if len(b) >= 5 && !bytes.HasPrefix(b, []byte("HTTP/")) {
			return nil, 0, errBadResponse
		}
		return nil, 0, errNeedMore
	}
	lines := strings.Split(strings.ReplaceAll(string(b[:end]), "\r\n", "\n"), "\n")
	sl := lines[0]
	if !strings.HasPrefix(sl, "HTTP/") {
		return nil, 0, errBadResponse
	}
	parts := strings.SplitN(sl, " ", 3)
	if len(parts) < 2 || len(parts[1]) != 3 {
		return nil, 0, errBadResponse
	}
	code, err := strconv.Atoi(parts[1])
	if err != nil || code < 100 {
		return nil, 0, errBadResponse
	}
	r := &Response{Proto: parts[0], Status: code}
	if len(parts) == 3 {
		r.Reason = parts[2]
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return nil, 0, errBadResponse
		}
		r.Header = append(r.Header, Field{Name: name, Value: strings.TrimSpace(value)})
	}
	return r, n, nil
}

// bodyMode says how a response body is delimited.
type bodyMode int

const (
	bodyNone bodyMode = iota
	bodyLength
	bodyChunked
	bodyUntilClose
)

// framing returns how r's body is delimited, given the request method.
func (r *Response) framing(method string) (bodyMode, int64, error) {
	if method == "HEAD" || r.Status/100 == 1 || r.Status == 204 || r.Status == 304 {
		return bodyNone, 0, nil
	}
	if te, ok := r.Get("Transfer-Encoding"); ok {
		if strings.EqualFold(strings.TrimSpace(lastToken(te)), "chunked") {
			return bodyChunked, 0, nil
		}
		return bodyUntilClose, 0, nil
	}
	if cl, ok := r.Get("Content-Length"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
		if err != nil || n < 0 || n > maxResponseBody {
			return 0, 0, errBadResponse
		}
		return bodyLength, n, nil
	}
	return bodyUntilClose, 0, nil
}

func lastToken(s string) string {
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		return s[i+1:]
	}
	return s
}

// parseChunked decodes a chunked body at the start of b. It returns the
// decoded body and the number of bytes consumed, or errNeedMore.
func parseChunked(b []byte) ([]byte, int, error) {
	var body []byte
	off := 0
	for {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return nil, 0, errNeedMore
		}
		line := strings.TrimRight(string(b[off:off+i]), "\r")
		off += i + 1
		if semi := strings.IndexByte(line, ';'); semi >= 0 {
			line = line[:semi]
		}
		size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil || size < 0 || size > maxResponseBody {
			return nil, 0, errBadResponse
		}
		if size == 0 {
			// Trailer section: lines until an empty one.
			for {
				j := bytes.IndexByte(b[off:], '\n')
				if j < 0 {
					return nil, 0, errNeedMore
				}
				l := strings.TrimRight(string(b[off:off+j]), "\r")
				off += j + 1
				if l == "" {
					return body, off, nil
				}
			}
		}
		if int64(len(b)-off) < size {
			return nil, 0, errNeedMore
		}
		body = append(body, b[off:off+int(size)]...)
		off += int(size)
		// chunk-data CRLF
		switch {
		case len(b)-off >= 2 && b[off] == '\r' && b[off+1] == '\n':
			off += 2
		case len(b)-off >= 1 && b[off] == '\n':
			off++
		case len(b)-off < 2:
			return nil, 0, errNeedMore
		default:
			return nil, 0, errBadResponse
		}
		if len(body) > maxResponseBody {
			return nil, 0, errBadResponse
		}
	}
}
