package riptide

import (
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/israce"
)

// Race-checked zero-copy. A Ctx hands out slices of memory it reuses:
// the request head in the connection's read buffer, ReadBody's and the
// decoded query values' scratch buffer. A handler that keeps one past
// ServeCtx (the fasthttp/Fiber class of bug, gofiber/fiber#3236) reads
// whatever the next request put there. Under the race detector (-race)
// the server makes that loud, at no cost in other builds (every function
// here returns at once when israce.Enabled is false, a constant):
//
//   - before a native handler (not a bare FromHTTP, whose strings are
//     copies), an HTTP/1.1 request head is moved out of the
//     read buffer into memory of its own (at the same offsets: the compat
//     door finds its strings by them, headBuf), which nothing else uses;
//   - after the request, that memory and the scratch buffer (given up:
//     the next request starts a new one) are overwritten with
//     keptBytesRule by keptCtxBytesAfterHandlerReturned, on a goroutine
//     of its own.
//
// A goroutine that reads kept bytes without synchronising with that
// write is reported by the race detector, the write's stack naming
// keptCtxBytesAfterHandlerReturned; one that reads them after the write
// reads the rule itself ("riptide: Ctx bytes kept after the handler
// returned ...", cut to the slice's length). TestRaceKeptPath shows both.

// keptBytesRule is what kept bytes read as once the request is over.
const keptBytesRule = "riptide: Ctx bytes kept after the handler returned; they are valid only until ServeCtx returns: copy them (string(b), bytes.Clone). "

// raceState is a request's race-build state: the memory its head was
// moved to.
type raceState struct {
	head []byte
}

// raceOwnHead moves an HTTP/1.1 request head out of the read buffer
// (race builds only); called before the handler.
func (x *Ctx) raceOwnHead() {
	if !israce.Enabled || x.conn.ex.protoMajor() != 1 || x.conn.pin == 0 {
		return
	}
	c := x.conn
	if _, ok := c.srv.Handler.(compatHandler); ok {
		return // its strings are copies already (compat_request.go)
	}
	rbuf := c.rbuf[:c.pin] // the head, and whatever the buffer held before it
	base := uintptr(unsafe.Pointer(unsafe.SliceData(rbuf)))
	head := make([]byte, len(rbuf))
	copy(head, rbuf)
	// Offsets stay: the compat door finds the head's strings by them.
	forHeadSlices(&x.req, func(b *[]byte) {
		if off, ok := within(*b, base, len(rbuf)); ok {
			n := uintptr(len(*b))
			*b = head[off : off+n : off+n]
		}
	})
	x.race.head = head
}

// headBuf is what holds the request head: the read buffer up to the end
// of the head, or, in race builds, raceOwnHead's copy of it.
func (x *Ctx) headBuf() []byte {
	if israce.Enabled && x.race.head != nil {
		return x.race.head
	}
	return x.conn.rbuf[:x.conn.pin]
}

// forHeadSlices calls f with each byte slice of r's head.
func forHeadSlices(r *h1.Request, f func(*[]byte)) {
	f(&r.Method)
	f(&r.Target)
	f(&r.Path)
	f(&r.Query)
	f(&r.Host)
	for i := range r.Headers {
		f(&r.Headers[i].Name)
		f(&r.Headers[i].Value)
	}
}

// within returns b's offset in the buffer at base of size n, if b is a
// non-empty slice of it.
func within(b []byte, base uintptr, n int) (uintptr, bool) {
	if len(b) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p - base, p >= base && p+uintptr(len(b)) <= base+uintptr(n)
}

// raceRelease hands the request's head memory and the scratch buffer to
// keptCtxBytesAfterHandlerReturned (race builds only); called once the
// request is over, when nothing of the server reads them any more.
func (x *Ctx) raceRelease() {
	if !israce.Enabled {
		return
	}
	head, scratch := x.race.head, x.scratch
	x.race.head, x.scratch = nil, nil
	if len(head) == 0 && len(scratch) == 0 {
		return
	}
	// Each slice of the head reads as the rule from its first byte.
	var spans [][2]int
	base := uintptr(unsafe.Pointer(unsafe.SliceData(head)))
	forHeadSlices(&x.req, func(b *[]byte) {
		if off, ok := within(*b, base, len(head)); ok {
			spans = append(spans, [2]int{int(off), len(*b)})
		}
	})
	go keptCtxBytesAfterHandlerReturned(head, spans, scratch)
}

// keptCtxBytesAfterHandlerReturned overwrites a finished request's head
// and scratch memory with keptBytesRule; its name is what the race
// detector's report shows for a handler that kept Ctx bytes.
func keptCtxBytesAfterHandlerReturned(head []byte, spans [][2]int, scratch []byte) {
	poisonBytes(head)
	for _, s := range spans {
		poisonBytes(head[s[0] : s[0]+s[1]])
	}
	poisonBytes(scratch)
}

func poisonBytes(b []byte) {
	for i := range b {
		b[i] = keptBytesRule[i%len(keptBytesRule)]
	}
}
