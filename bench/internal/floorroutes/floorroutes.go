// Package floorroutes serves the benchmark routes on riptide's native API
// after doing, for every request, the work that net/http's contract makes
// any server of an unchanged http.Handler do and that the native door does
// not: the lower bound on what the compat door can cost (its "contract
// floor"), measured in the same runs as the two doors.
//
// net/http lets a handler keep the *http.Request, its URL, its Header map,
// every string in them, and the response Header map it filled; so a server
// must give each request fresh ones and cannot reuse them. Per request the
// floor therefore allocates and fills, as a compat door must:
//
//   - one block holding the http.Request, its url.URL and the body reader
//     (a compat door can group these; riptide's does);
//   - one immutable copy of the bytes the request's strings are made of
//     (method, target, host, field names and values), all strings sharing it;
//   - the backing array of the header values ([]string of one each) and the
//     request Header map with every field but Host;
//   - the response Header map, filled as the bench handlers of package
//     stdroutes fill it (Content-Type and Content-Length, each a new
//     []string: the handler's own allocations, which net/http makes too),
//     and read back as a server reads it to write the response head;
//   - for POST /echo, the handler's own io.ReadAll of the body.
//
// It leaves out, so that the figure stays a lower bound, everything a
// compat door does that a cleverer one might avoid or share: routing
// through http.ServeMux, the request's context, the ResponseWriter's
// interface calls, RemoteAddr, canonicalising field names (the load
// generators send canonical names) and validating response fields.
package floorroutes

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
)

// request is what the floor allocates for one request, in one block.
type request struct {
	r    http.Request
	u    url.URL
	body body
	w    http.Header // the response Header map
	// headLen is the response fields' length as a head would carry
	// them, read from w as a server writing the head reads it.
	headLen int
}

// body is the request's Body: a reader over the body's bytes, in the
// request's block.
type body struct{ bytes.Reader }

// Close implements io.Closer.
func (*body) Close() error { return nil }

// kept is where each request is put when the handler returns, as a
// handler that keeps its request would: it makes the compiler allocate
// every object on the heap, as a server handing them to an arbitrary
// http.Handler must.
var kept atomic.Pointer[request]

// Handler returns the native routes of profile p behind the contract
// floor's per-request work.
func Handler(p benchserver.Profile) riptide.Handler {
	next := riptideroutes.Handler(p)
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		rq := newRequest(c)
		switch string(c.Path()) {
		case "/":
			respond(rq, "text/plain; charset=utf-8", len(benchserver.Hello))
		case "/json":
			respond(rq, "application/json", 27) // {"message":"Hello, World!"}
		case "/64k":
			respond(rq, "application/octet-stream", len(benchserver.Body64K))
		case "/echo":
			b, err := c.ReadBody()
			if err != nil {
				c.SetStatus(400)
				return
			}
			rq.body.Reset(b)
			out, err := io.ReadAll(rq.r.Body) // the echo handler's own read (stdroutes.echoBody)
			if err != nil {
				c.SetStatus(400)
				return
			}
			respond(rq, "application/octet-stream", len(out))
			c.SetContentType("application/octet-stream")
			c.Write(out)
			kept.Store(rq)
			return
		default:
			respond(rq, "text/plain; charset=utf-8", 0)
		}
		next.ServeCtx(c)
		kept.Store(rq)
	})
}

// newRequest builds the request's block, strings and Header map.
func newRequest(c *riptide.Ctx) *request {
	q := c.Request()
	n := len(q.Method) + len(q.Target) + len(q.Host)
	for _, f := range q.Headers {
		n += len(f.Name) + len(f.Value)
	}
	buf := make([]byte, 0, n)
	str := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		off := len(buf)
		buf = append(buf, b...)
		return unsafe.String(&buf[off], len(b))
	}
	rq := new(request)
	r := &rq.r
	r.Method = str(q.Method)
	r.RequestURI = str(q.Target)
	rq.u.Path, rq.u.RawQuery, _ = strings.Cut(r.RequestURI, "?")
	r.URL = &rq.u
	r.Host = str(q.Host)
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", q.Major, q.Minor
	if q.Major == 2 {
		r.Proto = "HTTP/2.0"
	}
	vals := make([]string, len(q.Headers))
	h := make(http.Header, len(q.Headers))
	for i, f := range q.Headers {
		if string(f.Name) == "Host" {
			continue
		}
		name := str(f.Name)
		vals[i] = str(f.Value)
		if old, ok := h[name]; ok {
			h[name] = append(old, vals[i])
			continue
		}
		h[name] = vals[i : i+1 : i+1]
	}
	r.Header = h
	r.ContentLength = q.ContentLength
	r.Body = &rq.body
	return rq
}

// respond fills the response Header map as the stdroutes handlers do and
// reads it back as a server writing the head must.
func respond(rq *request, contentType string, n int) {
	w := make(http.Header)
	w["Content-Type"] = []string{contentType}
	w["Content-Length"] = []string{strconv.Itoa(n)}
	rq.headLen = 0
	for k, v := range w {
		for _, s := range v {
			rq.headLen += len(k) + len(s) + 4
		}
	}
	rq.w = w
}
