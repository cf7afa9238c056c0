package riptide

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// upper is a BodyFilter that upper-cases the body, holding bytes until
// Flush, and counts its Flush calls.
type upper struct {
	x       *Ctx
	held    []byte
	flushes int
}

func (u *upper) Write(p []byte) (int, error) {
	u.held = append(u.held, bytes.ToUpper(p)...)
	return len(p), nil
}

func (u *upper) Flush() error {
	u.flushes++
	u.x.WriteUnfiltered(u.held)
	u.held = u.held[:0]
	return u.x.FlushUnfiltered()
}

// TestBodyFilter: Write, WriteString and Flush go through the filter, which
// writes on unfiltered; the middleware removes it and finishes; the
// declared Content-Length it drops with DelHeader is not sent; the next
// request on the connection has no filter. Over HTTP/1.1 and h2c.
func TestBodyFilter(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int32
	_, addr := startServer(t, &Server{HTTP2: &HTTP2Config{H2C: true}}, func(c *Ctx) {
		if c.QueryArg("plain") != nil {
			if c.BodyFilter() != nil {
				t.Error("filter left from an earlier request")
			}
			c.WriteString("plain")
			return
		}
		u := &upper{x: c}
		c.SetBodyFilter(u)
		c.SetContentLength(99)
		c.DelHeader("Content-Length")
		c.Write([]byte("abc "))
		c.WriteString("def ")
		c.Flush()
		c.WriteString("ghi")
		c.SetBodyFilter(nil)
		u.Flush() // the middleware finishes its filter
		c.WriteString(" jkl")
		flushes.Store(int32(u.flushes))
	})
	for _, h2 := range []bool{false, true} {
		var p http.Protocols
		if h2 {
			p.SetUnencryptedHTTP2(true)
		} else {
			p.SetHTTP1(true)
		}
		tr := &http.Transport{Protocols: &p}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		for _, target := range []string{"/", "/?plain=1"} {
			resp, err := c.Get("http://" + addr + target)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := "ABC DEF GHI jkl"
			if target != "/" {
				want = "plain"
			}
			if string(body) != want || (target == "/" && resp.ContentLength != -1) {
				t.Errorf("h2 %v %s: body %q, length %d; want %q streamed", h2, target, body, resp.ContentLength, want)
			}
		}
		if n := flushes.Load(); n != 2 {
			t.Errorf("filter flushed %d times, want 2", n)
		}
	}
}
