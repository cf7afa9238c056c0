package riptide

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"testing"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/israce"
)

// The tests of the invariants compat_alloc.go states for each use of
// package unsafe in the compat door (the list at its top).

// A slab hands out each block once, and what a request was given stays
// its own: blocks taken across slabs of several shapes (a request that
// does not fit the current slab starts a new one), with the slabs
// referenced only by the blocks given out, keep what was written into
// them through garbage collections and later takes.
func TestCompatSlabTakesEachBlockOnce(t *testing.T) {
	type taken struct {
		rq   *compatRequest
		vals []string
		head []byte
		mark string
	}
	var s compatSlab
	var all []taken
	seen := map[*compatRequest]bool{}
	shapes := []struct{ nvals, nhead int }{{0, 40}, {1, 60}, {3, 150}, {10, 300}, {16, 1200}, {40, 4000}}
	for nreq := 1; nreq <= 120; nreq++ {
		sh := shapes[(nreq/5)%len(shapes)]
		rq, vals, head := s.take(sh.nvals, sh.nhead, nreq, nreq%17 == 0)
		if seen[rq] {
			t.Fatalf("request %d: block %p given out twice", nreq, rq)
		}
		seen[rq] = true
		if len(vals) < sh.nvals || len(head) < sh.nhead {
			t.Fatalf("request %d: %d values, %d head bytes for %d, %d", nreq, len(vals), len(head), sh.nvals, sh.nhead)
		}
		mark := fmt.Sprintf("#%d#", nreq)
		rq.req.Method = mark
		for i := range vals {
			vals[i] = mark
		}
		for i := range head {
			head[i] = mark[i%len(mark)]
		}
		all = append(all, taken{rq, vals, head, mark})
		if nreq%10 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	var sink [][]byte // reuse whatever the GC freed
	for range 1000 {
		sink = append(sink, make([]byte, 640))
	}
	runtime.KeepAlive(sink)
	for i, tk := range all {
		ok := tk.rq.req.Method == tk.mark
		for _, v := range tk.vals {
			ok = ok && v == tk.mark
		}
		for j, b := range tk.head {
			ok = ok && b == tk.mark[j%len(tk.mark)]
		}
		if !ok {
			t.Fatalf("request %d: its block was overwritten (method %q)", i+1, tk.rq.req.Method)
		}
	}
}

// The strings of a Request are substrings of a copy of the head, never of
// the read buffer: once the next request overwrites the buffer, they read
// as before; the whole-head copy (wholeHead) and the compact one
// (compactHead) alike. Each view maps to its own bytes (headString.of).
func TestCompatHeadStringsOwnTheirBytes(t *testing.T) {
	const raw = "PROPFIND /dav/a%20b?depth=1 HTTP/1.1\r\nHost: example.com:8080\r\n" +
		"X-Custom-Thing: one\r\nContent-Type: text/plain\r\nX-Custom-Thing: two\r\n\r\n"
	for _, compact := range []bool{false, true} {
		buf := []byte(raw)
		var hr h1.Request
		if _, err := hr.Parse(buf, nil); err != nil {
			t.Fatal(err)
		}
		views := [][]byte{hr.Method, hr.Target, hr.Path, hr.Query, hr.Host}
		for _, f := range hr.Headers {
			if f.Key == h1.Unknown {
				views = append(views, f.Name)
			}
			views = append(views, f.Value)
		}
		var st compatState
		var sub headString
		if compact {
			sub = st.compactHead(buf, make([]byte, st.compactSegs(&hr, buf)))
		} else {
			sub = wholeHead(buf, make([]byte, len(buf)+16))
		}
		want := make([]string, len(views))
		got := make([]string, len(views))
		for i, v := range views {
			want[i], got[i] = string(v), sub.of(v)
		}
		for i := range buf {
			buf[i] = 'Z' // the next request, read into the same buffer
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("compact %v: view %d reads %q after the buffer changed, want %q", compact, i, got[i], want[i])
			}
		}
	}
}

// hostIsField compares addresses, not contents: Host is a field's value
// only when it is those bytes (HTTP/1.1), not when it holds bytes of its
// own (an HTTP/2 or HTTP/3 :authority), even with the same text.
func TestCompatHostIsField(t *testing.T) {
	var hr h1.Request
	if _, err := hr.Parse([]byte("GET / HTTP/1.1\r\nHost: same\r\nX-A: same\r\n\r\n"), nil); err != nil {
		t.Fatal(err)
	}
	if !hostIsField(&hr) {
		t.Error("HTTP/1.1: Host is not its field's value")
	}
	b := []byte("GET/samesameX-A")
	hr.Reset()
	if err := hr.SetRequestLine(b[0:3], b[3:4], 1); err != nil {
		t.Fatal(err)
	}
	hr.Host = b[4:8]                // an :authority, bytes of its own
	hr.AddHeader(b[12:15], b[8:12]) // X-A: same, equal text elsewhere
	if hostIsField(&hr) {
		t.Error("an :authority with a field's text taken for the field")
	}
	hr.Host = hr.Headers[0].Value
	if !hostIsField(&hr) {
		t.Error("Host pointing at the field's value not seen")
	}
}

// requestCtxField is found: http.Request has its unexported ctx field,
// typed context.Context, and Request.Context returns what is written
// there. This fails on a Go release that renames, retypes or stops using
// it; the door then copies each request (setRequestContextCopy: the same
// result, one allocation more), never writes a wrong field. Both ways give
// the request its context and keep its other fields; the field write
// allocates nothing.
func TestCompatRequestCtxField(t *testing.T) {
	if requestCtxField == 0 {
		t.Fatalf("%s: http.Request has no ctx field of type context.Context that Request.Context returns: "+
			"the compat door falls back to a copy per request (one allocation more); find the field again (findRequestCtxField)",
			runtime.Version())
	}
	if f, _ := reflect.TypeFor[http.Request]().FieldByName("ctx"); f.Offset != requestCtxField {
		t.Fatalf("requestCtxField %d, the ctx field is at %d", requestCtxField, f.Offset)
	}
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	for name, set := range map[string]func(*http.Request, context.Context){
		"field": setRequestContext, "copy": setRequestContextCopy,
	} {
		r := &http.Request{Method: "PUT", URL: &url.URL{Path: "/p"}, Header: http.Header{"A": {"1"}}, Host: "h"}
		set(r, ctx)
		if r.Context() != ctx || r.Method != "PUT" || r.URL.Path != "/p" || r.Header.Get("A") != "1" || r.Host != "h" {
			t.Errorf("%s: context %v, request %s %s %v %s", name, r.Context(), r.Method, r.URL, r.Header, r.Host)
		}
	}
	if !israce.Enabled {
		var r http.Request
		if n := testing.AllocsPerRun(100, func() { setRequestContext(&r, ctx) }); n != 0 {
			t.Errorf("setRequestContext: %v allocations, want 0", n)
		}
	}
}

// ctxField refuses, with 0, each way a Go release could change the field:
// renamed, retyped, or no longer what the getter returns; it finds the
// field as it is today.
func TestCompatCtxFieldRefusesChanges(t *testing.T) {
	type renamed struct {
		_       int
		context context.Context
	}
	type retyped struct {
		_   int
		ctx any
	}
	type unused struct {
		_ int
		//lint:ignore U1000 the field ctxField finds, which the getter no longer reads
		ctx  context.Context
		real context.Context
	}
	type today struct {
		_   int
		ctx context.Context
	}
	for name, tc := range map[string]struct{ got, want uintptr }{
		"renamed": {ctxField("ctx", func(r *renamed) context.Context { return r.context }), 0},
		"retyped": {ctxField("ctx", func(r *retyped) context.Context { c, _ := r.ctx.(context.Context); return c }), 0},
		"unused":  {ctxField("ctx", func(r *unused) context.Context { return r.real }), 0},
		"today":   {ctxField("ctx", func(r *today) context.Context { return r.ctx }), reflect.TypeFor[today]().Field(1).Offset},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: offset %d, want %d", name, tc.got, tc.want)
		}
	}
}

// A compatBody finds its request from where it lies: for a block of every
// shape, a separately allocated request, and the Body a handler gets.
func TestCompatBodyFindsItsRequest(t *testing.T) {
	for i := range compatBlocks {
		bl := &compatBlocks[i]
		slab := bl.slab(2)
		for j := range 2 {
			if rq, _, _ := bl.at(slab, j); rq.body.rq() != rq {
				t.Errorf("block %d, #%d: the body's request is %p, want %p", i, j, rq.body.rq(), rq)
			}
		}
	}
	if rq := new(compatRequest); rq.body.rq() != rq {
		t.Errorf("a request of its own: the body's request is %p, want %p", rq.body.rq(), rq)
	}
	same := make(chan bool, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := r.Body.(*compatBody)
		same <- ok && &b.rq().req == r
		io.Copy(io.Discard, r.Body)
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	readResponse(t, br)
	if !<-same {
		t.Error("the handler's Body does not find the handler's Request")
	}
}
