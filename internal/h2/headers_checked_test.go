package h2

import (
	"bytes"
	"net"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestEmitFieldCheckedOnce: a field the HPACK table gives again, the same
// strings at the same position of a block, is not checked again
// (h2Block.checked), but everything that makes a block malformed still
// does: a pseudo-header after a regular field when both are such
// repeats, a bad value or an upper-case name where a checked field was,
// and an empty name at a position nothing was checked at yet.
func TestEmitFieldCheckedOnce(t *testing.T) {
	srv, cli := net.Pipe()
	t.Cleanup(func() { srv.Close(); cli.Close() })
	hc := NewConn(&Config{Handler: nopHandler{}}, srv, nil, nil, nil)
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	valid := func(fields ...hpack.HeaderField) bool {
		buf.Reset()
		for _, f := range fields {
			_ = enc.WriteField(f)
		}
		hc.startBlock(&frame{})
		if _, err := hc.hdec.Write(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := hc.hdec.Close(); err != nil {
			t.Fatal(err)
		}
		ok := !hc.block.invalid && len(hc.block.fields) == len(fields)
		clear(hc.block.fields)
		return ok
	}
	f := func(name, value string) hpack.HeaderField { return hpack.HeaderField{Name: name, Value: value} }
	method, scheme, auth, path := f(":method", "GET"), f(":scheme", "http"), f(":authority", "a.example"), f(":path", "/p")
	xa, xb := f("x-a", "one"), f("x-b", "two")

	if valid(f("", "")) {
		t.Error("a field with an empty name (nothing checked at its position yet) was taken")
	}
	for i := range 3 {
		if !valid(method, scheme, auth, path, xa, xb) {
			t.Fatalf("request %d: a valid block refused", i)
		}
	}
	if got := hc.block.checked[5]; got.Name != "x-b" || got.Value != "two" {
		t.Fatalf("checked[5] = %v, want x-b: two", got)
	}
	// :path at position 3 is the checked field there, after a regular one.
	if valid(method, scheme, xa, path) {
		t.Error("a pseudo-header after a regular field (both from the table) was taken")
	}
	for _, tc := range []struct {
		name string
		bad  hpack.HeaderField
	}{
		{"control byte in the value", hpack.HeaderField{Name: "x-a", Value: "o\x01e", Sensitive: true}},
		{"CR LF in the value", hpack.HeaderField{Name: "x-a", Value: "o\r\ne", Sensitive: true}},
		{"upper-case name", hpack.HeaderField{Name: "X-A", Value: "one", Sensitive: true}},
		{"empty name", hpack.HeaderField{Name: "", Value: "one", Sensitive: true}},
		{"space in the name", hpack.HeaderField{Name: "x a", Value: "one", Sensitive: true}},
	} {
		if valid(method, scheme, auth, path, tc.bad, xb) {
			t.Errorf("%s where a checked field was: block taken", tc.name)
		}
	}
	if !valid(method, scheme, auth, path, xa, xb) {
		t.Error("the valid block refused after the malformed ones")
	}
}
