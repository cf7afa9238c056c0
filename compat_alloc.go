package riptide

// Every use of package unsafe in the compat door's request side is in
// this file (compat_request.go, compat_context.go, compat_body.go and
// compat.go import none; compat_writer.go has one of its own, its
// WriteString's view of a string's bytes, written and never kept), each
// with the invariant it relies on and the test that checks it:
//
//   - compatBlock.at, block: a request block and its two arrays are
//     found by offsets (unsafe.Offsetof, unsafe.Sizeof) of the one
//     compatRequestBlock instantiation the slab was made of, at index i <
//     n of a slab of n blocks. TestCompatBlockSizeClasses.
//   - compatSlab.base: the slab is held as an unsafe.Pointer, which the
//     GC follows, so a slab lives while a conn may take from it or any of
//     its requests is kept; each block is given out once.
//     TestCompatSlabTakesEachBlockOnce.
//   - wholeHead, compactHead: the strings of a Request are made with
//     unsafe.String from a copy of the head that is never written again
//     (never the read buffer, which the next request overwrites).
//     TestCompatHeadStringsOwnTheirBytes, TestCompatCompactHead.
//   - headString.of, offsetIn: a view's substring is found by its address
//     minus the head's. The views are the head's: every protocol's fill
//     keeps the reqhead contract, and newRequest checks it
//     (reqhead.Head.Check) before any offset is taken.
//     TestRequestHeadContract, TestCompatBrokenHeadContractRefused.
//   - hostIsField: compares the addresses of Host and the field values (no
//     pointer is made from them). TestCompatHostIsField.
//   - requestCtxField, setRequestContext: the Request's Context is set by
//     writing net/http's unexported ctx field at its reflect-found offset,
//     only if that field exists with type context.Context and a probe
//     shows Request.Context returning what is written there; otherwise a
//     copy as WithContext makes (one allocation more per request, nothing
//     wrong). TestCompatRequestCtxField fails on a Go release that
//     renames, retypes or stops using the field (each refused:
//     TestCompatCtxFieldRefusesChanges); a moved field is found where it
//     moved.
//   - compatBody.rq: the body finds its request by subtracting its offset
//     in compatRequest: a compatBody exists only as compatRequest.body
//     (never copied or made on its own). TestCompatBodyFindsItsRequest.

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/israce"
)

// compatInlineHead is the longest request head a compatRequest for a
// request without header values (besides Host) holds without a separate
// allocation. It brings its block to the 768-byte size class (with the
// runtime's 8-byte header, see compatBlocks).
const compatInlineHead = 216

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
	used, n int32 // at most compatSlabMax (int32: compatState fits a smaller size class)
}

// take returns a block that holds nvals header values and nhead bytes of
// head, never given out before: the next of the slab when it fits, else
// the first of a new slab of the first shape that fits (compatSlabLen
// blocks for the connection's nreq-th request, the last if last), else
// separate allocations.
func (s *compatSlab) take(nvals, nhead, nreq int, last bool) (*compatRequest, []string, []byte) {
	if bl := s.shape; bl != nil && s.used < s.n && bl.fits(nvals, nhead) {
		s.used++
		return bl.at(s.base, int(s.used-1))
	}
	for i := range compatBlocks {
		if bl := &compatBlocks[i]; bl.fits(nvals, nhead) {
			n := compatSlabLen(nreq, last)
			base := bl.slab(n)
			if n > 1 {
				*s = compatSlab{base: base, shape: bl, used: 1, n: int32(n)}
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
	n := compatSlabMax
	if israce.Enabled {
		// sync.Pool drops what is put at random under the race
		// detector: a slab dropped with blocks untaken would keep them
		// alive, unused, with its taken ones. One block each.
		n = 1
	}
	rq, vals, head := s.take(nvals, nhead, n, false)
	compatStreamSlabs.Put(s)
	return rq, vals, head
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

// wholeHead copies head into buf, at least as long and never written
// again (the string made from it is immutable), and returns the
// headString over the copy. head is not empty: it starts with the method.
func wholeHead(head, buf []byte) headString {
	n := copy(buf, head)
	return headString{s: unsafe.String(unsafe.SliceData(buf), n), base: unsafe.Pointer(unsafe.SliceData(head))}
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

// requestCtxField locates http.Request's unexported context field so that
// the request's Context can be set without the copy WithContext makes (one
// allocation per request). It is 0, and setRequestContext copies instead,
// unless the field is there with type context.Context and is what
// Request.Context returns (findRequestCtxField): a Go release that renames,
// retypes or stops using the field costs an allocation, not a wrong
// Context, and fails TestCompatRequestCtxField.
var requestCtxField = findRequestCtxField()

// findRequestCtxField returns the offset of http.Request's ctx field, or 0
// unless a context written there is what Request.Context returns.
func findRequestCtxField() uintptr {
	return ctxField("ctx", (*http.Request).Context)
}

// ctxField returns the offset in T of its field name if that field has
// type context.Context and get returns a context written there; else 0
// (also for a field at offset 0: 0 means "not found").
func ctxField[T any](name string, get func(*T) context.Context) uintptr {
	f, ok := reflect.TypeFor[T]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[context.Context]() {
		return 0
	}
	var v T
	probe := context.WithValue(context.Background(), ctxFieldProbe{}, name)
	*(*context.Context)(unsafe.Add(unsafe.Pointer(&v), f.Offset)) = probe
	if get(&v) != probe {
		return 0
	}
	return f.Offset
}

// ctxFieldProbe is the key of the context ctxField writes.
type ctxFieldProbe struct{}

// setRequestContext makes ctx the Context of r, which must be a fresh
// Request no other goroutine has seen.
func setRequestContext(r *http.Request, ctx context.Context) {
	if requestCtxField == 0 {
		setRequestContextCopy(r, ctx)
		return
	}
	*(*context.Context)(unsafe.Add(unsafe.Pointer(r), requestCtxField)) = ctx
}

// setRequestContextCopy is setRequestContext without the field: r becomes
// the copy WithContext makes (an allocation).
func setRequestContextCopy(r *http.Request, ctx context.Context) {
	*r = *r.WithContext(ctx)
}

// compatBodyOffset is where compatRequest.body lies in its compatRequest.
const compatBodyOffset = unsafe.Offsetof(compatRequest{}.body)

// rq returns the request b is the body of.
func (b *compatBody) rq() *compatRequest {
	return (*compatRequest)(unsafe.Add(unsafe.Pointer(b), -int(compatBodyOffset)))
}
