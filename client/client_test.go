package client

import (
	"context"
	"net"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

func TestDoGet(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	var c Client
	var req Request
	var resp Response
	if err := req.SetURL(s.url("/hello?x=1")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 || string(resp.Body()) != "Hello, World!" || string(resp.Header("content-type")) != "text/plain" {
			t.Fatalf("got %d %q", resp.StatusCode(), resp.Body())
		}
	}
	if n := s.accepts.Load(); n != 1 {
		t.Fatalf("connections = %d, want 1 (keep-alive)", n)
	}
}

var _ = net.Dial
var _ = h1.ErrNeedMore
