package riptide

import (
	"context"
	"fmt"
	"testing"
)

type localKey struct{ name string }

// TestLocals (issue 28, item 4): values set with SetLocal reach Local and
// Value (so a Ctx used as a context.Context carries them), more than the
// inline ones work, and none survives into the next request.
func TestLocals(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/set" {
			for i := range 6 {
				c.SetLocal(localKey{fmt.Sprint(i)}, i)
			}
			c.SetLocal(localKey{"1"}, "one") // replaces
		}
		var ctx context.Context = c
		fmt.Fprintf(c, "%v %v %v %v", c.Local(localKey{"0"}), ctx.Value(localKey{"1"}), c.Local(localKey{"5"}), c.Value("absent"))
	})
	nc, br := dialRaw(t, addr)
	for _, tc := range []struct{ path, want string }{
		{"/set", "0 one 5 <nil>"},
		{"/get", "<nil> <nil> <nil> <nil>"}, // same connection, same Ctx: cleared
	} {
		fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", tc.path)
		if _, body := readResponse(t, br); body != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, body, tc.want)
		}
	}
}

// TestLocalsZeroAllocs: a local with a pointer value under a zero-size key
// costs nothing per request.
func TestLocalsZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	user := &struct{ name string }{"ann"}
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetLocal(struct{}{}, user)
		if c.Local(struct{}{}) != user || c.Value(struct{}{}) != user {
			panic("lost local")
		}
		c.WriteString("Hello, World!") // what newAllocClient expects
	})
	ac := newAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if a := testing.AllocsPerRun(2000, ac.roundTrip); a != 0 {
		t.Errorf("%v allocs per request, want 0", a)
	}
}
