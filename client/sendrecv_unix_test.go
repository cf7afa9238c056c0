//go:build unix

package client

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// TestSendRecvPartialWrite: a request that sendRecv cannot write at once
// (the server, with a tiny receive window, is not reading yet) is finished
// through the poller and answered normally.
func TestSendRecvPartialWrite(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024)
		})
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &rawServer{handle: func(c net.Conn, req *h1.Request, body []byte) bool {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return true
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		time.Sleep(50 * time.Millisecond) // let the client fill its buffers
		s.serveConn(c)
	}()
	c := &Client{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			nc.(*net.TCPConn).SetWriteBuffer(1024)
		}
		return nc, err
	}}
	body := make([]byte, inlineBodyMax)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for i := 0; i < 3; i++ {
		var req Request
		var resp Response
		req.SetURL("http://" + ln.Addr().String() + "/")
		req.SetMethod("PUT")
		req.SetBody(body)
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.Body(), body) {
			t.Fatalf("request %d: echoed %d bytes, want the %d sent", i, len(resp.Body()), len(body))
		}
	}
	c.CloseIdleConnections()
	<-done
}
