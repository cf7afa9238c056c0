package riptide

import (
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

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

// newRequest builds the *http.Request for the request in x. On a target
// that net/http could not parse either it answers 400 and returns false.
func (st *compatState) newRequest(x *Ctx) (*compatRequest, bool) {
	hr := &x.req
	c := x.conn

	// One string holds the bytes of the head the Request refers to;
	// every string in the Request (method, target, header names and
	// values) is a substring, found by its offset in the head: every
	// protocol's fill leaves the head contiguous, method first (reqhead),
	// which Check makes sure of before any offset is taken.
	if !c.head.Check(hr) {
		// A fill broke the contract: no string is made of bytes that
		// are not the head's. Not reached (TestRequestHeadContract).
		x.canned(http.StatusInternalServerError)
		return nil, false
	}
	head := c.head.Bytes()
	var sub headString
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
		sub = wholeHead(head, make([]byte, len(head)))
	} else if wholeHeadFits(nvals, len(head)) {
		// The whole head: one copy, and its strings found by offset.
		var buf []byte
		rq, vals, buf = st.take(c, nvals, len(head), x.resp.close)
		sub = wholeHead(head, buf)
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
		if p := x.ConnectProtocol(); p != nil {
			// An extended CONNECT, as net/http's HTTP/2 server shows one.
			if r.Header == nil {
				r.Header = http.Header{}
			}
			r.Header[":protocol"] = []string{string(p)}
		}
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
