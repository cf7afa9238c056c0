package riptide

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// compatInlineHead is the longest request head a compatRequest for a
// request without header values (besides Host) holds without a separate
// allocation. It brings its block to the 768-byte size class (with the
// runtime's 8-byte header, see compatBlocks).
const compatInlineHead = 216

// compatRequest is everything a compat request owns: the *http.Request
// handed to the handler with its URL, Context and Body. It is allocated
// with the backing array of its header values and the compact copy of the
// head its strings share (compactHead), in a compatRequestBlock whose
// shape (compatBlocks) fits them, so that a request costs no allocation of
// its own besides its Header map: blocks are allocated several at a time
// (compatSlab). A block is given to one request only, never
// pooled or handed out again: the handler may keep any of the request
// after ServeHTTP returns, as net/http allows. What it keeps keeps the
// blocks allocated with it alive too (at most compatSlabMax).
type compatRequest struct {
	req  http.Request
	url  url.URL
	ctx  compatContext
	body compatBody
}

// compatRequestBlock is a compatRequest with room for V (an array of
// header value strings) and H (an array of bytes for the head or its
// compact copy), allocated together. The head array is written once,
// before any string refers to it, and never again: the strings made from
// it are immutable as Go requires.
type compatRequestBlock[V, H any] struct {
	compatRequest
	vals V
	head H
}

// compatBlock is one shape of compatRequestBlock: room for vals header
// values and head bytes of head.
type compatBlock struct {
	vals, head int
	size       uintptr // of the whole block
	voff, hoff uintptr // of its vals and head arrays
	// slab allocates n blocks of this shape together (one allocation)
	// and returns the first.
	slab func(n int) unsafe.Pointer
}

// at returns the request of the i-th block of a slab of this shape that
// starts at base, and its two arrays as slices.
func (bl *compatBlock) at(base unsafe.Pointer, i int) (*compatRequest, []string, []byte) {
	p := unsafe.Add(base, uintptr(i)*bl.size)
	return (*compatRequest)(p), // the block's first field
		unsafe.Slice((*string)(unsafe.Add(p, bl.voff)), bl.vals),
		unsafe.Slice((*byte)(unsafe.Add(p, bl.hoff)), bl.head)
}

// fits reports whether a block of this shape holds nvals header values and
// nhead bytes of head.
func (bl *compatBlock) fits(nvals, nhead int) bool {
	return bl.vals >= nvals && bl.head >= nhead
}

func block[V, H any]() compatBlock {
	var b compatRequestBlock[V, H]
	return compatBlock{
		vals: int(unsafe.Sizeof(b.vals) / unsafe.Sizeof("")),
		head: int(unsafe.Sizeof(b.head)),
		size: unsafe.Sizeof(b),
		voff: unsafe.Offsetof(b.vals),
		hoff: unsafe.Offsetof(b.head),
		slab: func(n int) unsafe.Pointer {
			return unsafe.Pointer(unsafe.SliceData(make([]compatRequestBlock[V, H], n)))
		},
	}
}

// compatBlocks are the shapes a request is allocated in, smallest first;
// each, with the 8-byte header the runtime puts before an object with
// pointers larger than 512 bytes, fills a malloc size class
// (compatRequest is 544 bytes on 64-bit platforms;
// TestCompatBlockSizeClasses checks). A request is allocated in the first
// that holds its header values and (compact) head; a larger one takes
// separate allocations for what does not fit.
var compatBlocks = [...]compatBlock{
	block[[0]string, [88]byte](),               // 640: a short whole head (a load generator's GET)
	block[[1]string, [72]byte](),               // 640
	block[[2]string, [56]byte](),               // 640
	block[[3]string, [168]byte](),              // 768
	block[[0]string, [compatInlineHead]byte](), // 768: a whole head, no values
	block[[6]string, [120]byte](),              // 768
	block[[6]string, [248]byte](),              // 896
	block[[10]string, [184]byte](),             // 896
	block[[6]string, [376]byte](),              // 1024
	block[[10]string, [312]byte](),             // 1024
	block[[16]string, [216]byte](),             // 1024
	block[[6]string, [504]byte](),              // 1152
	block[[10]string, [440]byte](),             // 1152
	block[[16]string, [344]byte](),             // 1152
	block[[10]string, [568]byte](),             // 1280
	block[[16]string, [472]byte](),             // 1280
	block[[10]string, [824]byte](),             // 1536
	block[[16]string, [728]byte](),             // 1536
	block[[10]string, [1336]byte](),            // 2048
	block[[16]string, [1240]byte](),            // 2048
}

// wholeHeadFits reports whether a block of one of the two smallest sizes
// (640 and 768 bytes) holds nvals header values and a whole head of nhead
// bytes: then the head is kept whole, which costs one copy; a larger one
// is compacted (compactSegs), which may bring it down to a smaller block.
func wholeHeadFits(nvals, nhead int) bool {
	for i := range compatBlocks {
		bl := &compatBlocks[i]
		if bl.size > compatWholeHeadMax {
			return false
		}
		if bl.fits(nvals, nhead) {
			return true
		}
	}
	return false
}

// compatWholeHeadMax is the size of the largest block wholeHeadFits
// uses, the 768-byte size class.
const compatWholeHeadMax = unsafe.Sizeof(compatRequestBlock[[0]string, [compatInlineHead]byte]{})

// compatSlabMax is the most request blocks allocated together: what a
// retained request can keep alive beyond its own block, and what a
// connection may hold allocated ahead of its requests.
const compatSlabMax = 8

// compatSlabLen is how many blocks to allocate together for the nreq-th
// request of a connection: one for its first, then twice as many each time
// (2 for the 2nd and 3rd, 4 for the 4th to 7th, ...) up to compatSlabMax,
// so that a connection allocates ahead at most as many blocks as it has
// used; one when the connection closes after this request.
func compatSlabLen(nreq int, last bool) int {
	n := 1
	for !last && 2*n <= nreq && n < compatSlabMax {
		n *= 2
	}
	return n
}

// compatSlab is the request blocks a conn allocated ahead: n of shape,
// the first used of them taken. A block is taken once; the slab is dropped
// for a new one when it is used up or a request does not fit. It lives in
// the conn's compatState: on the goroutine engine one connection's, on the
// event loop a worker's, shared by every connection it serves (so an idle
// connection holds none there).
type compatSlab struct {
	base    unsafe.Pointer
	shape   *compatBlock
	used, n int
}

// take returns a block that holds nvals header values and nhead bytes of
// head, never given out before: the next of the slab when it fits, else
// the first of a new slab of the first shape that fits (compatSlabLen
// blocks for the connection's nreq-th request, the last if last), else
// separate allocations.
func (s *compatSlab) take(nvals, nhead, nreq int, last bool) (*compatRequest, []string, []byte) {
	if bl := s.shape; bl != nil && s.used < s.n && bl.fits(nvals, nhead) {
		s.used++
		return bl.at(s.base, s.used-1)
	}
	for i := range compatBlocks {
		if bl := &compatBlocks[i]; bl.fits(nvals, nhead) {
			n := compatSlabLen(nreq, last)
			base := bl.slab(n)
			if n > 1 {
				*s = compatSlab{base: base, shape: bl, used: 1, n: n}
			}
			return bl.at(base, 0)
		}
	}
	return new(compatRequest), make([]string, nvals), make([]byte, nhead)
}

// compatStreamSlabs holds the request-block slabs of HTTP/2 streams. A
// stream's conn (newStreamConn) serves one request and goes back to a
// pool that every connection shares, so a slab of its own would hold one
// block (an allocation per request) or keep blocks unused in every
// pooled conn; these slabs are shared per P instead, taken and put back
// around one take. Each block still goes to one request only, never
// reused, and a retained request keeps at most compatSlabMax blocks
// alive, as on HTTP/1.1; the pool drops its slabs at GC.
var compatStreamSlabs = sync.Pool{New: func() any { return new(compatSlab) }}

// take returns a block for the request on c (compatSlab.take): from
// st's slab on an HTTP/1.1 connection, from compatStreamSlabs on an
// HTTP/2 stream.
func (st *compatState) take(c *conn, nvals, nhead int, last bool) (*compatRequest, []string, []byte) {
	if !c.stream {
		return st.blocks.take(nvals, nhead, c.nreq, last)
	}
	s := compatStreamSlabs.Get().(*compatSlab)
	rq, vals, head := s.take(nvals, nhead, compatSlabMax, false)
	compatStreamSlabs.Put(s)
	return rq, vals, head
}

// newRequest builds the *http.Request for the request in x. On a target
// that net/http could not parse either it answers 400 and returns false.
func (st *compatState) newRequest(x *Ctx) (*compatRequest, bool) {
	hr := &x.req
	c := x.conn

	// One string holds the bytes of the head the Request refers to;
	// every string in the Request (method, target, header names and
	// values) is a substring.
	base := x.headBuf() // c.rbuf[:c.pin]; its copy in race builds (racecheck.go)
	head := base[offsetIn(base, hr.Method):]
	sub := headString{base: unsafe.Pointer(unsafe.SliceData(hr.Method))}
	fs := summarize(hr)
	nvals := fs.values
	var rq *compatRequest
	var vals []string
	var hdr http.Header
	if st.reuse {
		// CompatOptions.ReuseRequests: the request and its value array
		// are this state's, reset; the head is copied into a new array,
		// never reused, so the strings stay immutable and may be kept.
		rq, vals, hdr = st.reused(nvals)
		buf := make([]byte, len(head))
		n := copy(buf, head)
		sub.s = unsafe.String(unsafe.SliceData(buf), n)
	} else if wholeHeadFits(nvals, len(head)) {
		// The whole head: one copy, and its strings found by offset.
		var buf []byte
		rq, vals, buf = st.take(c, nvals, len(head), x.resp.close)
		n := copy(buf, head)
		sub.s = unsafe.String(&buf[0], n)
		vals = vals[:nvals]
	} else {
		n := st.compactSegs(hr, head)
		var buf []byte
		rq, vals, buf = st.take(c, nvals, n, x.resp.close)
		sub = st.compactHead(head, buf[:n])
		vals = vals[:nvals]
	}
	r := &rq.req

	r.Method = internMethod(hr.Method, sub)
	r.RequestURI = sub.of(hr.Target)
	if !rq.setURL(hr, sub) {
		// net/http answers such a target 400 and closes.
		x.canned(http.StatusBadRequest)
		return nil, false
	}
	r.URL = &rq.url
	ex := c.ex
	major := ex.protoMajor()
	h2 := major >= 2 // HTTP/2 or HTTP/3: requests from fields, the same rules
	switch {
	case major == 3:
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/3.0", 3, 0
	case h2:
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	case hr.Minor == 1:
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	default:
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.0", 1, 0
	}
	r.Header = header(hr, sub, vals, hdr, fs.pragma)
	if h2 {
		h2Header(r.Header, fs)
	}
	r.Host = rq.url.Host
	if r.Host == "" {
		r.Host = sub.of(hr.Host)
	}
	r.Close = hr.Close
	r.ContentLength = hr.ContentLength
	if hr.Chunked || h2 {
		if hr.Chunked && !h2 {
			r.TransferEncoding = []string{"chunked"}
		}
		// As net/http: the announcement moves from Header to Trailer
		// (on HTTP/2 whatever the body). Looked up only when a Trailer
		// field came (fieldSummary): most requests have none.
		if fs.trailer {
			if tv, ok := r.Header["Trailer"]; ok {
				r.Trailer = declaredTrailers(tv)
				delete(r.Header, "Trailer")
			}
		}
	}
	if c.body.done {
		// No body (the engine found none before the handler runs).
		r.Body = http.NoBody
	} else {
		rq.body.ex = ex
		r.Body = &rq.body
	}
	r.RemoteAddr = ex.remoteAddrString()
	if c.srv.Forwarded != nil { // per request: forwarded.go
		r.RemoteAddr = x.RemoteAddr().String()
	}
	r.TLS = ex.tlsState()
	rq.ctx.x = x
	rq.ctx.laddr = ex.localAddr()
	rq.ctx.srv = c.srv.httpServer()
	setRequestContext(r, &rq.ctx)
	return rq, true
}

// reused returns, for CompatOptions.ReuseRequests, the state's request
// (zeroed), room for nvals header values and its request Header map
// (cleared: a map keeps its buckets), made on first use.
func (st *compatState) reused(nvals int) (*compatRequest, []string, http.Header) {
	if st.rq == nil {
		st.rq = new(compatRequest)
		st.reqHdr = make(http.Header, nvals)
	} else {
		*st.rq = compatRequest{}
		clear(st.reqHdr)
	}
	if cap(st.vals) < nvals {
		st.vals = make([]string, nvals)
	}
	return st.rq, st.vals[:nvals], st.reqHdr
}

// poisonRequest overwrites, under the race detector, what
// CompatOptions.ReuseRequests reuses, from the serving goroutine as soon
// as ServeHTTP has returned: a handler (or a goroutine it started) that
// kept any of it and uses it afterwards is reported as a data race at
// once, not only when the next request happens to reuse it. The values
// written are empty but usable (a kept request still has a URL, a Header
// and a Body), so that the race report, not a nil dereference, is what the
// handler's author sees.
func poisonRequest(rq *compatRequest) {
	r := &rq.req
	h := r.Header
	clear(h)
	clear(r.Trailer)
	r.Method, r.RequestURI, r.Host, r.RemoteAddr, r.Proto = "", "", "", "", ""
	rq.url = url.URL{}
	r.URL, r.Header, r.Body = &rq.url, h, http.NoBody
	r.Trailer, r.Form, r.PostForm, r.MultipartForm = nil, nil, nil, nil
	r.ContentLength, r.TLS, r.Close = 0, nil, false
	setRequestContext(r, &rq.ctx)
}

// h2Header applies net/http's HTTP/2 server's rules to a request Header:
// Cookie fields are joined into one with "; " (RFC 9113 §8.2.3), and an
// "Expect: 100-continue" is answered by the server (the body's first
// read) and removed. fs, the summary of the request h was built from,
// says whether it has such fields, so that most requests cost no lookup.
func h2Header(h http.Header, fs fieldSummary) {
	if fs.cookies > 1 {
		if cs := h["Cookie"]; len(cs) > 1 {
			h["Cookie"] = []string{strings.Join(cs, "; ")}
		}
	}
	if fs.expect {
		if ev, ok := h["Expect"]; ok && len(ev) == 1 && ascii.EqualFold(ev[0], "100-continue") {
			delete(h, "Expect")
		}
	}
}

// headString is the request head as one string, and the address of its
// first byte in the read buffer, so that any slice of the parsed head maps
// to a substring. With segs, s holds only those segments of the head,
// back to back (see compactHead).
type headString struct {
	s    string
	base unsafe.Pointer
	segs []headSeg
	next int // the segment after the last one of's search found
}

// headSeg is one piece of the head held by a compact headString: n bytes
// at offset off of the head, at offset at of s.
type headSeg struct{ off, n, at int }

// of returns the substring for b, a slice of the parsed head.
func (h *headString) of(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	o := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(h.base))
	if h.segs == nil {
		return h.s[o : o+len(b)]
	}
	// header asks for the fields' pieces in head order, one segment
	// after another: try the next segment before searching.
	if k := h.next; k < len(h.segs) {
		if sg := h.segs[k]; sg.off <= o && o+len(b) <= sg.off+sg.n {
			h.next = k + 1
			return h.s[sg.at+o-sg.off : sg.at+o-sg.off+len(b)]
		}
	}
	// The segments are in head order: the last one starting at or
	// before o is the only one that can hold b.
	i, lo := -1, 0
	for hi := len(h.segs); lo < hi; {
		m := int(uint(lo+hi) >> 1)
		if h.segs[m].off <= o {
			i, lo = m, m+1
		} else {
			hi = m
		}
	}
	if i >= 0 {
		if sg := h.segs[i]; o+len(b) <= sg.off+sg.n {
			h.next = i + 1
			return h.s[sg.at+o-sg.off : sg.at+o-sg.off+len(b)]
		}
	}
	// Not a piece compactHead kept (no caller asks for one): a copy of
	// its own keeps the result correct.
	return string(b)
}

// compactSegs finds the pieces of the head the Request can refer to: the
// method unless internMethod has a constant for it, the target, the names
// of fields without a canonical constant and every field value. The
// request line's and the fields' framing and the known names are left
// out: for an API client's request that is more than half of the head.
// It returns their total length; the segment table is st's, reused
// (compactHead copies them; the headString is used only while newRequest
// runs).
func (st *compatState) compactSegs(hr *h1.Request, head []byte) int {
	segs := st.segs[:0]
	n := 0
	add := func(b []byte) {
		if len(b) == 0 {
			return
		}
		off := offsetIn(head, b)
		if k := len(segs) - 1; k >= 0 && segs[k].off+segs[k].n == off {
			segs[k].n += len(b) // adjacent: one piece
		} else {
			segs = append(segs, headSeg{off: off, n: len(b), at: n})
		}
		n += len(b)
	}
	if commonMethod(hr.Method) == "" {
		add(hr.Method)
	}
	add(hr.Target)
	if len(hr.Host) > 0 && !hostIsField(hr) {
		// An HTTP/2 request's :authority, which no field holds.
		add(hr.Host)
	}
	for i := range hr.Headers {
		f := &hr.Headers[i]
		if f.Key == h1.Unknown {
			add(f.Name)
		}
		add(f.Value)
	}
	st.segs = segs
	return n
}

// hostIsField reports whether hr.Host is the value of one of its fields
// (an HTTP/1.1 request's Host), not bytes of its own.
func hostIsField(hr *h1.Request) bool {
	for i := range hr.Headers {
		if f := &hr.Headers[i]; len(f.Value) > 0 && unsafe.SliceData(f.Value) == unsafe.SliceData(hr.Host) {
			return true
		}
	}
	return false
}

// compactHead copies the pieces compactSegs found into buf, which is as
// long as their total and never written again (the string made from it is
// immutable), and returns the headString over them.
func (st *compatState) compactHead(head, buf []byte) headString {
	for _, sg := range st.segs {
		copy(buf[sg.at:], head[sg.off:sg.off+sg.n])
	}
	h := headString{base: unsafe.Pointer(unsafe.SliceData(head)), segs: st.segs}
	if len(buf) > 0 {
		h.s = unsafe.String(&buf[0], len(buf))
	}
	return h
}

// offsetIn returns the offset of sub within base; sub must be a slice of
// base.
func offsetIn(base, sub []byte) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(base))))
}

// internMethod returns a constant string for the common methods.
func internMethod(m []byte, sub headString) string {
	if s := commonMethod(m); s != "" {
		return s
	}
	return sub.of(m)
}

// commonMethod returns the constant string for a common method, or "".
func commonMethod(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "HEAD":
		return "HEAD"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	}
	return ""
}

// setURL fills rq.url as url.ParseRequestURI does for the target (with
// net/http's treatment of CONNECT), without allocating for the common
// origin-form target whose path needs no unescaping.
func (rq *compatRequest) setURL(hr *h1.Request, sub headString) bool {
	u := &rq.url
	if hr.Form == h1.OriginForm && plainPath(hr.Path) {
		u.Path = sub.of(hr.Path)
		if hr.Query != nil {
			u.RawQuery = sub.of(hr.Query)
			u.ForceQuery = len(hr.Query) == 0
		}
		return true
	}
	target := rq.req.RequestURI
	connect := hr.Form == h1.AuthorityForm
	if connect {
		target = "http://" + target
	}
	pu, err := url.ParseRequestURI(target)
	if err != nil {
		return false
	}
	*u = *pu
	if connect {
		u.Scheme = ""
	}
	return true
}

// plainPath reports whether p is a path that url.ParseRequestURI would
// keep as it is, with an empty RawPath: only characters that need neither
// unescaping nor escaping.
func plainPath(p []byte) bool {
	for _, c := range p {
		if !plainPathByte[c] {
			return false
		}
	}
	return true
}

var plainPathByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~$&+,/:;=@" {
		t[c] = true
	}
	return t
}()

// fieldSummary is what one pass over a request's fields tells newRequest:
// how many header values the Request's Header holds (every field but Host
// and Transfer-Encoding), and
// whether the fields that need a rule after the Header is built are there
// at all, so that a request without them (most) costs no map lookup.
type fieldSummary struct {
	values  int
	cookies int  // Cookie fields (HTTP/2 joins several into one)
	expect  bool // an Expect field (HTTP/2 removes 100-continue)
	pragma  bool // a Pragma field (no-cache implies Cache-Control)
	trailer bool // a Trailer field (it moves to Request.Trailer)
}

// summarize makes hr's fieldSummary.
func summarize(hr *h1.Request) fieldSummary {
	var fs fieldSummary
	for i := range hr.Headers {
		f := &hr.Headers[i]
		switch f.Key {
		case h1.HeaderHost, h1.HeaderTransferEncoding:
			continue
		case h1.HeaderCookie:
			fs.cookies++
		case h1.HeaderExpect:
			fs.expect = true
		case h1.HeaderTrailer:
			fs.trailer = true
		case h1.Unknown:
			// h1 has no constant for Pragma.
			fs.pragma = fs.pragma || ascii.EqualFold(f.Name, "Pragma")
		}
		fs.values++
	}
	return fs
}

// header builds the canonical request Header as net/http does: Host and
// Transfer-Encoding are left out (they are in Request.Host and
// Request.TransferEncoding), keys are canonical, and repeated fields become
// one key with several values. vals, of length fieldSummary.values, backs the
// values. h, when not nil, is an empty map to fill (a reused one). pragma:
// hr has a Pragma field (fieldSummary).
func header(hr *h1.Request, sub headString, vals []string, h http.Header, pragma bool) http.Header {
	if h == nil {
		// An exact hint (at most one key per value) saves the map growth.
		h = make(http.Header, len(vals))
	}
	if !fillHeader(h, hr.Headers, &sub, vals, false) {
		// A repeated field: again, merging its values.
		clear(h)
		sub.next = 0
		fillHeader(h, hr.Headers, &sub, vals, true)
	}
	// RFC 9111 §5.4, as net/http: "Pragma: no-cache" alone implies
	// "Cache-Control: no-cache".
	if pragma {
		if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" {
			if _, ok := h["Cache-Control"]; !ok {
				h["Cache-Control"] = []string{"no-cache"}
			}
		}
	}
	return h
}

// fillHeader adds the fields hs to h (see header). Without merge it makes
// one map operation per field and stops, returning false, at the first key
// seen before (it did not grow the map); with merge it looks each key up
// first and appends to the values of a repeated one.
func fillHeader(h http.Header, hs []h1.Header, sub *headString, vals []string, merge bool) bool {
	nv := 0
	for i := range hs {
		f := &hs[i]
		key, ok := fieldKey(f, sub)
		if !ok {
			continue
		}
		v := sub.of(f.Value)
		if merge {
			if old, ok := h[key]; ok {
				h[key] = append(old, v)
				continue
			}
		}
		n := len(h)
		vals[nv] = v
		h[key] = vals[nv : nv+1 : nv+1]
		if len(h) == n {
			return false
		}
		nv++
	}
	return true
}

// fieldKey returns the Header key of the field f, canonical; ok is false
// for the fields the Header leaves out (Host, Transfer-Encoding).
func fieldKey(f *h1.Header, sub *headString) (key string, ok bool) {
	switch f.Key {
	case h1.HeaderHost, h1.HeaderTransferEncoding:
		return "", false
	case h1.Unknown:
		return textproto.CanonicalMIMEHeaderKey(sub.of(f.Name)), true
	}
	return f.Key.String(), true
}

// declaredTrailers returns the Trailer map net/http prepares for a chunked
// request: the declared names, canonical, without values yet.
func declaredTrailers(tv []string) http.Header {
	var t http.Header
	for _, v := range tv {
		for _, k := range strings.Split(v, ",") {
			k = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(k))
			switch k {
			case "", "Transfer-Encoding", "Trailer", "Content-Length":
				continue
			}
			if t == nil {
				t = make(http.Header)
			}
			t[k] = nil
		}
	}
	return t
}

// requestCtxField locates http.Request's unexported context field so that
// the request's Context can be set without the copy WithContext makes (one
// allocation per request). If a future Go renames the field, the lookup
// fails and setRequestContext falls back to WithContext.
var requestCtxField = func() uintptr {
	f, ok := reflect.TypeFor[http.Request]().FieldByName("ctx")
	if !ok || f.Type != reflect.TypeFor[context.Context]() {
		return 0
	}
	return f.Offset
}()

// setRequestContext makes ctx the Context of r, which must be a fresh
// Request no other goroutine has seen.
func setRequestContext(r *http.Request, ctx context.Context) {
	if requestCtxField == 0 {
		*r = *r.WithContext(ctx)
		return
	}
	*(*context.Context)(unsafe.Add(unsafe.Pointer(r), requestCtxField)) = ctx
}

// compatBody is Request.Body for requests that have one: it reads the
// engine's body stream while the handler runs and fails afterwards. It is
// only ever compatRequest.body: its request is found from where it lies
// (rq), not kept in a field, so that compatRequest fills its words.
type compatBody struct {
	// ex is the request's exchange, for Close (a closed HTTP/2 stream's
	// body makes a Read blocked in another goroutine return).
	ex       exchange
	closed   atomic.Bool
	trailers bool // request trailers merged into Request.Trailer
}

// compatBodyOffset is where compatRequest.body lies in its compatRequest.
const compatBodyOffset = unsafe.Offsetof(compatRequest{}.body)

// rq returns the request b is the body of.
func (b *compatBody) rq() *compatRequest {
	return (*compatRequest)(unsafe.Add(unsafe.Pointer(b), -int(compatBodyOffset)))
}

// Read reads the request body.
func (b *compatBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	cx := &b.rq().ctx
	cx.lock()
	defer cx.unlock()
	if cx.ended.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	x := cx.x
	var n int
	var err error
	if br := &x.conn.body; br.stream {
		var ok bool
		if n, err, ok = br.beginStreamRead(p); ok {
			// The read waits without the lock, so that the handler may
			// write the response meanwhile (full duplex, as net/http's
			// HTTP/2), and Close may make it return. The read is counted
			// (enterRead) while the handler has not returned, and the
			// stream is not given back to the engine before it leaves
			// (endReads, on HTTP/2 and HTTP/3 alike): it never reads a
			// stream reused for another request.
			br.enterRead()
			cx.unlock()
			n, err = b.ex.readBody(p)
			br.leaveRead()
			cx.lock()
			if cx.ended.Load() {
				return 0, http.ErrBodyReadAfterClose
			}
			n, err = br.endStreamRead(n, err)
		}
	} else {
		n, err = br.Read(p)
	}
	switch err {
	case io.EOF:
		if !b.trailers {
			b.trailers = true
			b.mergeTrailers(x)
		}
	case ErrBodyReadAfterClose:
		err = http.ErrBodyReadAfterClose
	case ErrBodyTooLarge:
		// What net/http's http.MaxBytesReader returns, and what code
		// written for net/http looks for with errors.As.
		err = &http.MaxBytesError{Limit: x.conn.body.limit}
	}
	return n, err
}

// mergeTrailers adds the received trailer fields to Request.Trailer, as
// net/http does when the body reaches io.EOF.
func (b *compatBody) mergeTrailers(x *Ctx) {
	ts := x.Trailers()
	if len(ts) == 0 {
		return
	}
	r := &b.rq().req
	if r.Trailer == nil {
		r.Trailer = make(http.Header, len(ts))
	}
	for _, f := range ts {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		r.Trailer[k] = append(r.Trailer[k], string(f.Value))
	}
}

// Close makes later reads fail. Whatever is left of the body is drained
// (or the connection closed) by the server after the handler returns; on
// HTTP/2 it is discarded now, and a Read blocked in another goroutine
// returns at once (as with net/http: grpc-go's ServeHTTP closes the body
// and then waits for its reader goroutine before it returns).
func (b *compatBody) Close() error {
	b.closed.Store(true)
	b.ex.closeBody(&b.rq().ctx.ended)
	return nil
}

// closedChan is a closed channel: Done of a request that has ended.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// compatContext is the request's Context. It is cancelled when the client
// goes away and when ServeHTTP returns. Nothing is set up until Done is
// first called: then the engine's disconnect watch starts, and a
// context.WithCancel made inside lets derived contexts (WithCancel,
// WithTimeout, through WithValue layers too) hang off it without a
// goroutine each, as they do off net/http's request context.
//
// mu serialises every use of the engine's state made on behalf of the
// handler (body reads, response writes, starting the watch), since Done may
// be called from any goroutine while the handler runs. Done never waits for
// mu (a body read may hold it for long): when mu is busy it leaves the
// watch to be started by whoever holds mu, as it unlocks.
type compatContext struct {
	mu sync.Mutex
	x  *Ctx // guarded by mu; nil once ended (end)

	lazyCtx
}

// The bits of lazyCtx.state.
const (
	ctxMaking    = 1 << iota // a Done is making the inner context
	ctxMade                  // ctx and stop are set (and never change)
	ctxEnded                 // the request ended (cancel)
	ctxWantWatch             // the inner context exists, the engine watch is not started yet
	ctxHijack                // the connection was hijacked: disconnects no longer cancel
)

// lazyCtx is the lazily made part of a request's Context (compatContext):
// no deadline, the
// local address as a value, and a context.WithCancel made only when Done
// is first called, so that derived contexts hang off it without a
// goroutine each and a request that never asks allocates nothing.
//
// No lock, and no allocation of its own: the inner context and its cancel
// function live here, published by state's ctxMade. The Done that makes
// them marks state ctxMaking first (by compare-and-swap), so that one Done
// makes them; a Done that meets ctxMaking waits for ctxMade (the maker is
// a context.WithCancel away). The end (cancel) meeting ctxMaking only sets
// ctxEnded: the maker then cancels the inner context before it publishes
// it, so that nobody sees it live after the end. A request that never
// asks for Done ends with one compare-and-swap.
//
// ended is compatContext's (set under its mu: ServeHTTP has returned),
// kept here beside state so that compatContext fills its words
// (compatRequest's size is what TestCompatBlockSizeClasses checks).
type lazyCtx struct {
	ended atomic.Bool
	state atomic.Uint32
	ctx   context.Context    // the inner context, once ctxMade
	stop  context.CancelFunc // its cancel function, once ctxMade
	laddr net.Addr
	srv   *http.Server // for http.ServerContextKey (Server.httpServer)
}

// Deadline reports no deadline, as net/http's request context.
func (c *lazyCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// done is Done; created reports that this call made the inner context.
func (c *lazyCtx) done() (ch <-chan struct{}, created bool) {
	for {
		s := c.state.Load()
		switch {
		case s&ctxMade != 0:
			return c.ctx.Done(), false
		case s&ctxMaking != 0:
			runtime.Gosched() // another Done is making it
			continue
		case s&ctxEnded != 0:
			return closedChan, false
		}
		if c.state.CompareAndSwap(s, s|ctxMaking) {
			break
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	c.ctx, c.stop = ctx, stop
	for {
		s := c.state.Load()
		if s&ctxEnded != 0 {
			stop() // the request ended meanwhile
		}
		if c.state.CompareAndSwap(s, s&^ctxMaking|ctxMade) {
			return ctx.Done(), true
		}
	}
}

// Err returns context.Canceled once Done is closed.
func (c *lazyCtx) Err() error {
	switch s := c.state.Load(); {
	case s&ctxMade != 0:
		return c.ctx.Err()
	case s&ctxEnded != 0:
		return context.Canceled
	}
	return nil
}

// Value returns the connection's local address for
// http.LocalAddrContextKey and the Server's *http.Server shim for
// http.ServerContextKey, as net/http does, and otherwise defers to the
// inner context (which is how context.WithCancel finds it, through
// WithValue layers too: Done, which it calls first, made it).
func (c *lazyCtx) Value(key any) any {
	switch key {
	case http.LocalAddrContextKey:
		return c.laddr
	case http.ServerContextKey:
		return c.srv
	}
	if c.state.Load()&ctxMade != 0 {
		return c.ctx.Value(key)
	}
	return nil
}

// cancel ends the context: the request is over.
func (c *lazyCtx) cancel() {
	for {
		s := c.state.Load()
		if s&ctxMade != 0 {
			c.stop()
			return
		}
		if s&ctxEnded != 0 || c.state.CompareAndSwap(s, s|ctxEnded) {
			return // nothing made yet: a Done making it cancels it
		}
	}
}

// flag reports whether bit (ctxWantWatch or ctxHijack) is set.
func (c *lazyCtx) flag(bit uint32) bool { return c.state.Load()&bit != 0 }

// setFlag sets or clears bit and reports whether it was set.
func (c *lazyCtx) setFlag(bit uint32, on bool) bool {
	if on {
		return c.state.Or(bit)&bit != 0
	}
	return c.state.And(^bit)&bit != 0
}

func (c *compatContext) lock() { c.mu.Lock() }

// unlock releases mu, first starting the disconnect watch if Done asked for
// it while mu was held.
func (c *compatContext) unlock() {
	c.mu.Unlock()
	if c.flag(ctxWantWatch) && c.mu.TryLock() {
		c.startWatchLocked()
		c.mu.Unlock()
	}
}

// startWatchLocked starts the engine's disconnect watch, which cancels
// inner when the client goes away. mu must be held.
func (c *compatContext) startWatchLocked() {
	if !c.setFlag(ctxWantWatch, false) || c.ended.Load() {
		return
	}
	c.x.watchFor(c)
}

// engineDone is the engine watch's news that its Done channel is closed:
// the client has gone (or the request ended). It cancels the context,
// unless the connection was hijacked.
func (c *compatContext) engineDone() {
	if !c.flag(ctxHijack) {
		c.lazyCtx.cancel()
	}
}

// Done returns a channel closed when the client goes away or ServeHTTP
// returns.
func (c *compatContext) Done() <-chan struct{} {
	ch, created := c.done()
	if created {
		c.setFlag(ctxWantWatch, true)
	}
	// Seen either here or by the holder of mu in unlock (it loads
	// ctxWantWatch after releasing mu).
	if c.flag(ctxWantWatch) && c.mu.TryLock() {
		c.startWatchLocked()
		c.mu.Unlock()
	}
	return ch
}

// String names the context, for fmt and context's own String methods.
func (c *compatContext) String() string { return "riptide.compatContext" }

// end cancels the context: ServeHTTP has returned (or panicked). The
// serving goroutine calls it; when finish has already ended the request
// under mu (endLocked), mu is not taken again.
func (c *compatContext) end() {
	if !c.ended.Load() {
		c.mu.Lock()
		c.endLocked()
		c.mu.Unlock()
	}
	c.lazyCtx.cancel()
}

// endLocked marks the request ended: body reads, response writes and
// the disconnect watch no longer reach the engine. mu must be held.
func (c *compatContext) endLocked() {
	c.ended.Store(true)
	c.x = nil
}
