package reqhead

import (
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// parse parses raw, an HTTP/1.1 head, in place and returns its Head as
// the server makes it (Parsed over the bytes Parse consumed).
func parse(t *testing.T, raw string) (*h1.Request, []byte, Head) {
	t.Helper()
	buf := []byte(raw)
	var req h1.Request
	n, err := req.Parse(buf, nil)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return &req, buf, Parsed(buf[:n])
}

// A head parsed in place keeps the contract, with the empty lines a
// client may send before the request line left out (the method first).
func TestParsedKeepsContract(t *testing.T) {
	for _, raw := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"\r\n\r\nPROPFIND /a%20b?q=1 HTTP/1.1\r\nHost: example.com:80\r\nX-A: 1\r\nX-A: 2\r\nEmpty:\r\n\r\n",
		"GET http://example.com/p HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
	} {
		req, _, h := parse(t, raw)
		if !h.Check(req) {
			t.Errorf("%q: Check false for a head parsed in place", raw)
		}
		if b := h.Bytes(); string(b[:len(req.Method)]) != string(req.Method) || &b[0] != &req.Method[0] {
			t.Errorf("%q: head %q does not start with the method", raw, b)
		}
	}
}

// Check refuses a head whose request has a view outside it, or whose
// method is not its first byte: each view in turn is pointed at a copy.
func TestCheckRefusesViewsOutside(t *testing.T) {
	const raw = "\r\nGET /p?q=1 HTTP/1.1\r\nHost: x\r\nX-Name: value\r\n\r\n"
	elsewhere := func(b []byte) []byte { return append([]byte(nil), b...) }
	for name, breakIt := range map[string]func(r *h1.Request, buf []byte, h *Head){
		"method copied":     func(r *h1.Request, _ []byte, _ *Head) { r.Method = elsewhere(r.Method) },
		"empty method":      func(r *h1.Request, _ []byte, _ *Head) { r.Method = r.Method[:0] },
		"target":            func(r *h1.Request, _ []byte, _ *Head) { r.Target = elsewhere(r.Target) },
		"path":              func(r *h1.Request, _ []byte, _ *Head) { r.Path = elsewhere(r.Path) },
		"query":             func(r *h1.Request, _ []byte, _ *Head) { r.Query = elsewhere(r.Query) },
		"host":              func(r *h1.Request, _ []byte, _ *Head) { r.Host = elsewhere(r.Host) },
		"field name":        func(r *h1.Request, _ []byte, _ *Head) { r.Headers[1].Name = elsewhere(r.Headers[1].Name) },
		"field value":       func(r *h1.Request, _ []byte, _ *Head) { r.Headers[1].Value = elsewhere(r.Headers[1].Value) },
		"head cut short":    func(_ *h1.Request, _ []byte, h *Head) { h.b = h.b[:len(h.b)-len("value\r\n\r\n")] },
		"head after method": func(_ *h1.Request, _ []byte, h *Head) { h.b = h.b[1:] },
		"empty line first":  func(_ *h1.Request, buf []byte, h *Head) { *h = Of(buf) },
		"zero head":         func(_ *h1.Request, _ []byte, h *Head) { *h = Head{} },
	} {
		req, buf, h := parse(t, raw)
		breakIt(req, buf, &h)
		if h.Check(req) {
			t.Errorf("%s: Check true", name)
		}
	}
	// Unbroken, the same request passes: the cases above fail for what
	// they changed.
	if req, _, h := parse(t, raw); !h.Check(req) {
		t.Error("unbroken: Check false")
	}
}

// Check allocates nothing: the compat door runs it for every request.
func TestCheckNoAllocation(t *testing.T) {
	req, _, h := parse(t, "GET /p?q=1 HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n")
	if n := testing.AllocsPerRun(100, func() {
		if !h.Check(req) {
			t.Fatal("Check false")
		}
	}); n != 0 {
		t.Errorf("Check: %v allocations, want 0", n)
	}
}
