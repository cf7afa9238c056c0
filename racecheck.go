package riptide

import (
	"sync"
	"unsafe"

	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/reqhead"
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
//     copies), the request head (HTTP/1.1, HTTP/2 or HTTP/3) is moved out
//     of the read buffer into memory of its own (at the same offsets: the
//     compat door finds its strings by them, headBuf), which nothing else
//     uses;
//   - after the request, that memory and the scratch buffer (swapped for
//     a poisoned one) are overwritten with keptBytesRule by
//     keptCtxBytesAfterHandlerReturned, then reused first in, first out
//     (no allocation per request: the allocation tests run under -race
//     too).
//
// Kept bytes read after the request read the rule itself ("riptide: Ctx
// bytes kept after the handler returned ...", cut to the slice's length),
// TestRaceKeptPath; a goroutine reading them while they are overwritten,
// without synchronising, is reported by the race detector, the write's
// stack naming keptCtxBytesAfterHandlerReturned.

// keptBytesRule is what kept bytes read as once the request is over.
const keptBytesRule = "riptide: Ctx bytes kept after the handler returned; they are valid only until ServeCtx returns: copy them (string(b), bytes.Clone). "

// raceArena is the memory a request's head is moved to, and the scratch
// buffer it gave up; arenas are reused through raceArenas once poisoned,
// so that race builds do not allocate per request either (the allocation
// tests run under -race too).
type raceArena struct {
	head    []byte
	scratch []byte
	spans   [][2]int // where each slice of the head starts, and its length
}

// raceQuarantine is how many poisoned arenas wait before one is reused,
// so that kept bytes go on reading as the rule for a while rather than
// as a later request's head.
const raceQuarantine = 64

// raceArenas are the poisoned arenas ready for reuse. Its mutex orders a
// reuse after the poisoning, for the race detector too.
var raceArenas struct {
	sync.Mutex
	free []*raceArena
	made int
}

// raceState is a request's race-build state.
type raceState struct {
	a *raceArena // the arena its head was moved to
}

// raceOwnHead moves a request head out of the read buffer, c.rbuf[:c.pin]
// (where HTTP/1.1 parses it and HTTP/2 and HTTP/3 fill it in), in race
// builds only; called before the handler.
func (x *Ctx) raceOwnHead() {
	if !israce.Enabled || x.conn.pin == 0 {
		return
	}
	c := x.conn
	if _, ok := c.srv.Handler.(compatHandler); ok {
		return // its strings are copies already (compat_request.go)
	}
	var a *raceArena
	raceArenas.Lock()
	// The oldest poisoned arena, once raceQuarantine arenas exist (first
	// in, first out: each waits for the others' turn); a new one only
	// while fewer exist, or when none is free (poisoning lags).
	if f := raceArenas.free; len(f) > 0 && raceArenas.made >= raceQuarantine {
		a = f[0]
		raceArenas.free = append(f[:0], f[1:]...)
	} else {
		raceArenas.made++
	}
	raceArenas.Unlock()
	if a == nil {
		a = new(raceArena)
	}
	rbuf := c.rbuf[:c.pin] // the head, and whatever the buffer held before it
	a.head = append(a.head[:0], rbuf...)
	// Offsets stay: the compat door finds the head's strings by them.
	r := &x.req
	rebase(&r.Method, rbuf, a.head)
	rebase(&r.Target, rbuf, a.head)
	rebase(&r.Path, rbuf, a.head)
	rebase(&r.Query, rbuf, a.head)
	rebase(&r.Host, rbuf, a.head)
	for i := range r.Headers {
		rebase(&r.Headers[i].Name, rbuf, a.head)
		rebase(&r.Headers[i].Value, rbuf, a.head)
	}
	// The request-head contract (reqhead) names the copy too, so the
	// compat door of a handler mounted below a native one finds its
	// strings there.
	if off, ok := within(c.head.Bytes(), rbuf); ok {
		c.head = reqhead.Of(a.head[off : off+len(c.head.Bytes())])
	}
	x.race.a = a
}

// rebase points *b, a non-empty slice of from, at the same bytes in to.
func rebase(b *[]byte, from, to []byte) {
	if off, ok := within(*b, from); ok {
		n := len(*b)
		*b = to[off : off+n : off+n]
	}
}

// within returns b's offset in buf, if b is a non-empty slice of it.
func within(b, buf []byte) (int, bool) {
	if len(b) == 0 || len(buf) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return int(p - base), p >= base && p+uintptr(len(b)) <= base+uintptr(len(buf))
}

// raceRelease hands the request's arena, with the scratch buffer, to
// keptCtxBytesAfterHandlerReturned (race builds only; the Ctx takes the
// arena's poisoned scratch buffer in exchange); called once the request
// is over, when nothing of the server reads them any more.
func (x *Ctx) raceRelease() {
	if !israce.Enabled || x.race.a == nil {
		return
	}
	a := x.race.a
	x.race.a = nil
	x.scratch, a.scratch = a.scratch[:0], x.scratch
	// Each slice of the head reads as the rule from its first byte.
	a.spans = a.spans[:0]
	r := &x.req
	a.span(r.Method)
	a.span(r.Target)
	a.span(r.Path)
	a.span(r.Query)
	a.span(r.Host)
	for i := range r.Headers {
		a.span(r.Headers[i].Name)
		a.span(r.Headers[i].Value)
	}
	keptCtxBytesAfterHandlerReturned(a)
}

func (a *raceArena) span(b []byte) {
	if off, ok := within(b, a.head); ok {
		a.spans = append(a.spans, [2]int{off, len(b)})
	}
}

// keptCtxBytesAfterHandlerReturned overwrites a finished request's head
// and scratch memory with keptBytesRule, then frees the arena for reuse;
// its name is what the race detector's report shows for a handler that
// kept Ctx bytes.
func keptCtxBytesAfterHandlerReturned(a *raceArena) {
	poisonBytes(a.head)
	for _, s := range a.spans {
		poisonBytes(a.head[s[0] : s[0]+s[1]])
	}
	poisonBytes(a.scratch)
	raceArenas.Lock()
	raceArenas.free = append(raceArenas.free, a)
	raceArenas.Unlock()
}

func poisonBytes(b []byte) {
	for i := range b {
		b[i] = keptBytesRule[i%len(keptBytesRule)]
	}
}
