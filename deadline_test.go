package riptide

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestCancelAfter: Done fires at the deadline with DeadlineExceeded; a
// handler that returns first leaves nothing armed for the next request on
// the connection, whose Ctx has no deadline.
func TestCancelAfter(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		switch string(c.Path()) {
		case "/wait":
			c.CancelAfter(20 * time.Millisecond)
			c.CancelAfter(time.Hour) // only the first counts
			dl, ok := c.Deadline()
			<-c.Done()
			fmt.Fprintf(c, "err=%v deadline=%v late=%v", c.Err(), ok, time.Now().Before(dl))
		case "/quick":
			c.CancelAfter(30 * time.Millisecond)
			c.WriteString("quick")
		default:
			time.Sleep(60 * time.Millisecond) // past /quick's deadline
			_, ok := c.Deadline()
			fmt.Fprintf(c, "err=%v deadline=%v", c.Err(), ok)
		}
	})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for _, tc := range []struct{ path, want string }{
		{"/wait", fmt.Sprintf("err=%v deadline=true late=false", context.DeadlineExceeded)},
		{"/quick", "quick"},
		{"/plain", "err=<nil> deadline=false"},
		{"/wait", fmt.Sprintf("err=%v deadline=true late=false", context.DeadlineExceeded)},
	} {
		io.WriteString(nc, "GET "+tc.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, body, tc.want)
		}
	}
}
