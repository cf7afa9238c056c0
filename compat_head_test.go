package riptide

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/reqhead"
)

// compactHead keeps only the pieces of the head a Request refers to, and
// every piece maps back to the bytes it came from.
func TestCompatCompactHead(t *testing.T) {
	t.Parallel()
	const raw = "PROPFIND /dav/a%20b?depth=1 HTTP/1.1\r\n" +
		"Host: example.com:8080\r\n" +
		"Content-Type: application/json\r\n" +
		"X-Custom-Thing: one\r\n" +
		"X-Custom-Thing: two\r\n" +
		"\r\n"
	buf := []byte(raw)
	var hr h1.Request
	if _, err := hr.Parse(buf, nil); err != nil {
		t.Fatal(err)
	}
	var st compatState
	h := st.compactHead(buf, make([]byte, st.compactSegs(&hr, buf)))
	kept := []string{"PROPFIND", "/dav/a%20b?depth=1", "example.com:8080", "application/json",
		"X-Custom-Thing", "one", "X-Custom-Thing", "two"}
	if want := strings.Join(kept, ""); h.s != want {
		t.Errorf("compact head %q, want %q", h.s, want)
	}
	for _, f := range hr.Headers {
		if f.Key == h1.Unknown {
			if got := h.of(f.Name); got != string(f.Name) {
				t.Errorf("name %q maps to %q", f.Name, got)
			}
		}
		if got := h.of(f.Value); got != string(f.Value) {
			t.Errorf("value %q maps to %q", f.Value, got)
		}
	}
	for _, b := range [][]byte{hr.Method, hr.Target, hr.Path, hr.Query, hr.Host, buf[len("PROPFIND /dav/a%20b?depth=1 "):][:len("HTTP/1.1")]} {
		if got := h.of(b); got != string(b) {
			t.Errorf("%q maps to %q", b, got)
		}
	}
	// A second request on the same state reuses the segment table.
	h2 := st.compactHead(buf, make([]byte, st.compactSegs(&hr, buf)))
	if h2.s != h.s {
		t.Errorf("second compact head %q, want %q", h2.s, h.s)
	}
}

// Through the compat door, every string of a request whose head is kept
// compact (an unknown method, an unknown repeated field, a query, a host
// with a port) reads as net/http would give it.
func TestCompatCompactHeadRequest(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	for _, m := range []string{"PROPFIND", "GET"} {
		io.WriteString(nc, m+" /p/q?x=1&y=2 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: t/1\r\n"+
			"X-Custom-Thing: one\r\nAccept: */*\r\nX-Custom-Thing: two\r\nPragma: no-cache\r\n\r\n")
		readResponse(t, br)
		r := <-got
		if r.Method != m || r.RequestURI != "/p/q?x=1&y=2" || r.URL.Path != "/p/q" || r.URL.RawQuery != "x=1&y=2" ||
			r.Host != "example.com:8080" {
			t.Errorf("%s: request line/host: %q %q %q %q %q", m, r.Method, r.RequestURI, r.URL.Path, r.URL.RawQuery, r.Host)
		}
		if v := r.Header["X-Custom-Thing"]; len(v) != 2 || v[0] != "one" || v[1] != "two" {
			t.Errorf("%s: X-Custom-Thing %q", m, v)
		}
		if r.Header.Get("User-Agent") != "t/1" || r.Header.Get("Accept") != "*/*" || r.Header.Get("Pragma") != "no-cache" ||
			r.Header.Get("Cache-Control") != "no-cache" || len(r.Header) != 5 {
			t.Errorf("%s: header %v", m, r.Header)
		}
	}
}

// compatBlocks are listed smallest first and each fills a malloc size
// class exactly (on 64-bit platforms), with the 8-byte header the runtime
// puts before an object with pointers larger than 512 bytes, so the room
// for values and head costs no bytes the allocator would not round up to
// anyway. The blocks of a slab lie one after another inside it, each
// with its arrays inside it.
func TestCompatBlockSizeClasses(t *testing.T) {
	t.Parallel()
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	classes := map[uintptr]bool{640: true, 768: true, 896: true, 1024: true, 1152: true, 1280: true, 1536: true, 2048: true}
	const mallocHeader = 8
	var prev uintptr
	for i := range compatBlocks {
		bl := &compatBlocks[i]
		if !classes[bl.size+mallocHeader] {
			t.Errorf("block %d (%d values, %d head bytes) is %d bytes: not a size class", i, bl.vals, bl.head, bl.size)
		}
		if bl.size < prev {
			t.Errorf("block %d (%d bytes) after a %d-byte one", i, bl.size, prev)
		}
		prev = bl.size
		for _, n := range []int{1, 2, compatSlabMax} {
			slab := bl.slab(n)
			base := uintptr(slab)
			for j := range n {
				rq, vals, head := bl.at(slab, j)
				start, end := base+uintptr(j)*bl.size, base+uintptr(j+1)*bl.size
				if uintptr(unsafe.Pointer(rq)) != start || len(vals) != bl.vals || len(head) != bl.head {
					t.Errorf("block %d, slab of %d, #%d: request at +%d, %d values, %d head bytes",
						i, n, j, uintptr(unsafe.Pointer(rq))-base, len(vals), len(head))
				}
				if v := uintptr(unsafe.Pointer(unsafe.SliceData(vals))); bl.vals > 0 &&
					(v < start+unsafe.Sizeof(compatRequest{}) || v+uintptr(len(vals))*unsafe.Sizeof("") > end) {
					t.Errorf("block %d, slab of %d, #%d: values outside the block", i, n, j)
				}
				if h := uintptr(unsafe.Pointer(unsafe.SliceData(head))); h < start+unsafe.Sizeof(compatRequest{}) || h+uintptr(len(head)) > end {
					t.Errorf("block %d, slab of %d, #%d: head outside the block", i, n, j)
				}
			}
		}
	}
}

// A connection allocates request blocks one for its first request, then
// as many as it has served so far, up to compatSlabMax; one for a request
// after which it closes.
func TestCompatSlabLen(t *testing.T) {
	t.Parallel()
	want := []int{1: 1, 2: 2, 3: 2, 4: 4, 7: 4, 8: 8, 9: 8, 100: 8}
	for nreq, w := range want {
		if w == 0 {
			continue
		}
		if got := compatSlabLen(nreq, false); got != w {
			t.Errorf("request %d: slab of %d, want %d", nreq, got, w)
		}
		if got := compatSlabLen(nreq, true); got != 1 {
			t.Errorf("request %d, the connection's last: slab of %d, want 1", nreq, got)
		}
	}
}

// Requests whose values and compact head fit each block, and those too
// large for any (separate allocations), reach the handler intact.
func TestCompatRequestBlocks(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	for _, nf := range []int{0, 1, 6, 7, 10, 11, 16, 17, 40} {
		for _, vlen := range []int{1, 20, 100, 300} {
			var b strings.Builder
			b.WriteString("GET /blocks HTTP/1.1\r\nHost: x\r\n")
			for i := range nf {
				fmt.Fprintf(&b, "X-F%d: %s\r\n", i, strings.Repeat(string(rune('a'+i%26)), vlen))
			}
			b.WriteString("\r\n")
			io.WriteString(nc, b.String())
			readResponse(t, br)
			r := <-got
			if len(r.Header) != nf {
				t.Errorf("%d fields of %d bytes: %d header keys", nf, vlen, len(r.Header))
			}
			for i := range nf {
				want := strings.Repeat(string(rune('a'+i%26)), vlen)
				if v := r.Header[fmt.Sprintf("X-F%d", i)]; len(v) != 1 || v[0] != want {
					t.Errorf("%d fields of %d bytes: X-F%d = %q", nf, vlen, i, v)
				}
			}
			if r.URL.Path != "/blocks" || r.Host != "x" {
				t.Errorf("%d fields of %d bytes: path %q host %q", nf, vlen, r.URL.Path, r.Host)
			}
		}
	}
}

// A handler may keep the request, its Header and the response Header map
// after ServeHTTP returns (the request, its URL and its header values live
// in a block given to it alone, allocated with others): later requests on
// the connection leave them intact, and
// the handler's goroutines may go on using them (-race sees any server
// access to them).
func TestCompatRetainedHeadersStayIntact(t *testing.T) {
	t.Parallel()
	type kept struct {
		r    *http.Request
		resp http.Header
	}
	keptc := make(chan kept, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-N", r.Header.Get("X-N"))
		keptc <- kept{r, w.Header()}
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	const n = 50
	var all []kept
	done := make(chan struct{})
	users := make(chan kept, n)
	go func() { // the handler's goroutine that goes on using what it kept
		defer close(done)
		for k := range users {
			k.r.Header.Set("X-Later", "1")
			k.resp.Set("X-Later", "1")
			// The Request, its URL and the header values' array are
			// in a block allocated with others (compatSlab): writing
			// them here races with the server if it ever gives the
			// block to a later request.
			k.r.RemoteAddr, k.r.URL.Fragment = "kept", "kept"
			k.r.Header["X-N"][0] += "."
		}
	}()
	for i := range n {
		fmt.Fprintf(nc, "GET /k%d HTTP/1.1\r\nHost: x\r\nX-N: %d\r\nUser-Agent: t\r\n\r\n", i, i)
		res, _ := readResponse(t, br)
		if got := res.Header.Get("X-N"); got != fmt.Sprint(i) {
			t.Fatalf("response %d: X-N %q", i, got)
		}
		k := <-keptc
		all = append(all, k)
		users <- k
	}
	close(users)
	<-done
	for i, k := range all {
		want := fmt.Sprint(i)
		if k.r.URL.Path != "/k"+want || k.r.Header.Get("X-N") != want+"." || k.r.Header.Get("User-Agent") != "t" ||
			k.r.Header.Get("X-Later") != "1" || len(k.r.Header) != 3 ||
			k.r.RemoteAddr != "kept" || k.r.URL.Fragment != "kept" {
			t.Errorf("kept request %d: %s#%s from %s %v", i, k.r.URL.Path, k.r.URL.Fragment, k.r.RemoteAddr, k.r.Header)
		}
		if k.resp.Get("X-N") != want || k.resp.Get("X-Later") != "1" || len(k.resp) != 2 {
			t.Errorf("kept response header %d: %v", i, k.resp)
		}
	}
}

// Repeated fields, known or not, in any case, first or last, merge in
// order into one key, as net/http's textproto does.
func TestCompatRepeatedFields(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "GET / HTTP/1.1\r\nAccept: a\r\nHost: x\r\nx-foo: 1\r\nAccept: b\r\nX-FOO: 2\r\n"+
		"Cookie: c1\r\ncookie: c2\r\nX-Once: o\r\nX-Last: z\r\nx-last: y\r\n\r\n")
	readResponse(t, br)
	h := <-got
	want := map[string][]string{"Accept": {"a", "b"}, "X-Foo": {"1", "2"}, "Cookie": {"c1", "c2"},
		"X-Once": {"o"}, "X-Last": {"z", "y"}}
	if len(h) != len(want) {
		t.Errorf("header %v, want %v", h, want)
	}
	for k, vs := range want {
		if g := h[k]; strings.Join(g, ",") != strings.Join(vs, ",") || len(g) != len(vs) {
			t.Errorf("%s: %q, want %q", k, g, vs)
		}
	}
}

// A request whose head breaks the reqhead contract (here: its views lie
// in the read buffer, the head the door is given is a copy elsewhere) is
// answered 500 by the compat door, which closes the connection, before any
// string is made from it: the handler never runs, and nothing panics
// (without the check, the door's offsets fall outside its copy of the
// head: a panic, recovered into a 500). A request whose head keeps the
// contract is served.
func TestCompatBrokenHeadContractRefused(t *testing.T) {
	served := make(chan string, 2)
	door := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served <- r.URL.Path
		io.WriteString(w, "ok")
	}))
	srv := &Server{Logger: slog.New(slog.DiscardHandler), Handler: HandlerFunc(func(x *Ctx) {
		if string(x.Path()) == "/broken" {
			x.conn.head = reqhead.Of(bytes.Clone(x.conn.head.Bytes()))
		}
		door.ServeCtx(x)
	})}
	addr := serveTest(t, srv, testServeOptions{}).Addr
	for _, tc := range []struct {
		path   string
		status int
	}{{"/broken", 500}, {"/kept", 200}} {
		nc, br := dialRaw(t, addr)
		io.WriteString(nc, "GET "+tc.path+" HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n")
		if res, _ := readResponse(t, br); res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, res.StatusCode, tc.status)
		}
	}
	if got := <-served; got != "/kept" || len(served) != 0 {
		t.Errorf("handler served %q (and %d more), want only /kept", got, len(served))
	}
	var st Stats
	if srv.Stats(&st); st.Panics != 0 {
		t.Errorf("%d handler panics, want 0: the broken head was not refused before use", st.Panics)
	}
}

// TestH3HeadCopyOneCheck: the HTTP/3 fill's copy (copyH3Head) leaves the
// request head contiguous, method first, with every view of the request
// inside it and reading the same bytes; a field that is not a view of the
// decoded field bytes is left where it is, and the head's Check, the one
// check of the contract (the compat door's), refuses the request: the
// fill has no refusal of its own.
func TestH3HeadCopyOneCheck(t *testing.T) {
	t.Parallel()
	for _, outside := range []bool{false, true} {
		fb := []byte("x-aonex-btwo")
		var req h1.Request
		if err := req.SetRequestLine([]byte("GET"), []byte("/p?q=1"), 1); err != nil {
			t.Fatal(err)
		}
		req.Host = []byte("example.com")
		req.AddHeader(fb[0:3], fb[3:6])
		value := fb[9:12]
		if outside {
			value = []byte("two") // not a view of fb
		}
		req.AddHeader(fb[6:9], value)
		head, _ := copyH3Head(&req, fb, make([]byte, 8))
		if got := head.Check(&req); got == outside {
			t.Errorf("outside %v: Check %v, want %v", outside, got, !outside)
		}
		if got, want := string(head.Bytes()), "GET/p?q=1example.com"+string(fb); got != want {
			t.Errorf("outside %v: head %q, want %q", outside, got, want)
		}
		if string(req.Method) != "GET" || string(req.Target) != "/p?q=1" || string(req.Path) != "/p" ||
			string(req.Query) != "q=1" || string(req.Host) != "example.com" {
			t.Errorf("outside %v: request %q %q %q %q %q", outside, req.Method, req.Target, req.Path, req.Query, req.Host)
		}
		for i, want := range [][2]string{{"x-a", "one"}, {"x-b", "two"}} {
			if f := req.Headers[i]; string(f.Name) != want[0] || string(f.Value) != want[1] {
				t.Errorf("outside %v: field %d %q: %q, want %q", outside, i, f.Name, f.Value, want)
			}
		}
		if outside && &req.Headers[1].Value[0] != &value[0] {
			t.Error("a value outside the field bytes was moved, not left for Check to refuse")
		}
	}
}
