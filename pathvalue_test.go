package riptide

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestPathValues: set, replace, read, a full array panics, and values do
// not survive into the next request on the connection.
func TestPathValues(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		before := string(c.PathValue("id"))
		c.SetPathValue("id", c.Path()[1:])
		c.SetPathValue("other", []byte("o"))
		c.SetPathValue("id", c.Path()) // replaces
		n := 0
		for range c.PathValues {
			n++
		}
		full := func() (panicked bool) {
			defer func() { panicked = recover() != nil }()
			for i := range MaxPathValues {
				c.SetPathValue(fmt.Sprint("k", i), nil)
			}
			return false
		}()
		id, other := string(c.PathValue("id")), string(c.PathValue("other"))
		c.ClearPathValues()
		fmt.Fprintf(c, "before=%q id=%s other=%s missing=%v n=%d full-panics=%v cleared=%v",
			before, id, other, c.PathValue("missing") == nil, n, full, c.PathValue("id") == nil)
	})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for _, path := range []string{"/first", "/second"} {
		io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		want := fmt.Sprintf(`before="" id=%s other=o missing=true n=2 full-panics=true cleared=true`, path)
		if string(body) != want {
			t.Errorf("%s: %s, want %s", path, body, want)
		}
	}
}
