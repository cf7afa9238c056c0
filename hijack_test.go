package riptide

import (
	"bufio"
	"io"
	"testing"
)

// Hijack hands over the raw connection and the bytes already read past the
// request (here the first bytes of the new protocol, sent pipelined).
func TestHijack(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) != "/upgrade" {
			hello(c)
			return
		}
		nc, buffered, err := c.Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		nc.Write(buffered)
		br := bufio.NewReader(nc)
		line, _ := br.ReadString('\n')
		io.WriteString(nc, "echo: "+line)
		if _, err := c.Write([]byte("x")); err != ErrHijacked {
			t.Errorf("Write after Hijack: %v", err)
		}
	})
	rc := dial(t, addr)
	// A normal request first: its response must go out before the hijack.
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nearly\n")
	if _, body := rc.resp("GET"); body != "Hello, World!" {
		t.Fatalf("first response %q", body)
	}
	res, _ := rc.resp("GET")
	if res.StatusCode != 101 {
		t.Fatalf("got %d", res.StatusCode)
	}
	line, _ := rc.br.ReadString('\n')
	if line != "early\n" {
		t.Fatalf("buffered bytes: %q", line)
	}
	rc.send("late\n")
	if line, _ := rc.br.ReadString('\n'); line != "echo: late\n" {
		t.Fatalf("after hijack: %q", line)
	}
}
