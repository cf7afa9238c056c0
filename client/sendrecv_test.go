package client

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// TestUnsolicitedResponseRetiresConnPOST: as TestUnsolicitedResponseRetiresConn,
// for requests that cannot be sent twice, with every way a body is sent:
// inline with the head (checked by sendRecv), too large to inline,
// streamed, and after "Expect: 100-continue" (checked before the write).
func TestUnsolicitedResponseRetiresConnPOST(t *testing.T) {
	// Each body starts with the request's path, which the server echoes
	// (its request head may be overwritten by a long body).
	bodies := []struct {
		name string
		set  func(r *Request, path string)
	}{
		{"inline", func(r *Request, path string) { r.SetBodyString(path) }},
		{"large", func(r *Request, path string) {
			r.SetBodyString(path + strings.Repeat("x", inlineBodyMax))
		}},
		{"stream", func(r *Request, path string) { r.SetBodyStream(strings.NewReader(path), -1) }},
		{"expect", func(r *Request, path string) {
			r.AddHeader("Expect", "100-continue")
			r.SetBodyString(path)
		}},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			send, sent := make(chan struct{}), make(chan struct{})
			s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
				if req.Expect100 && body == nil {
					c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
					return true
				}
				path := strings.TrimRight(string(body), "x")
				resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(path), path)
				c.Write([]byte(resp))
				if path == "/first" {
					<-send
					c.Write([]byte(resp))
					sent <- struct{}{}
				}
				return true
			})
			c := &Client{}
			post := func(path string) string {
				var req Request
				var resp Response
				req.SetURL(s.url(path))
				req.SetMethod("POST")
				b.set(&req, path)
				if err := c.Do(context.Background(), &req, &resp); err != nil {
					t.Fatalf("POST %s: %v", path, err)
				}
				return string(resp.Body())
			}
			if got := post("/first"); got != "/first" {
				t.Fatalf("first request answered with %q", got)
			}
			send <- struct{}{}
			<-sent
			waitUnsolicitedArrived(t, c, s)
			for _, path := range []string{"/second", "/third"} {
				if got := post(path); got != path {
					t.Fatalf("request %s answered with %q", path, got)
				}
			}
		})
	}
}

// countingConn wraps a TCP connection (embedding it, so that it is still a
// syscall.Conn) and counts the bytes its Read and Write methods see.
type countingConn struct {
	*net.TCPConn
	read, written *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// TestWrappedConnSeesEveryByte: a connection from Client.Dial that wraps a
// socket sees every byte of every exchange through its own Read and Write
// (sendRecv, which uses the socket directly, is only for the standard
// types).
func TestWrappedConnSeesEveryByte(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	var read, written atomic.Int64
	c := &Client{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{nc.(*net.TCPConn), &read, &written}, nil
	}}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	const n = 5
	for i := 0; i < n; i++ {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		if string(resp.Body()) != "Hello, World!" {
			t.Fatalf("body %q", resp.Body())
		}
	}
	if got, want := read.Load(), int64(n*len(helloResp)); got != want {
		t.Errorf("the wrapper read %d bytes, want %d", got, want)
	}
	cn := &conn{p: &hostPool{c: c, authority: s.addr}}
	head := cn.appendHead(nil, &req)
	if got, want := written.Load(), int64(n*len(head)); got != want {
		t.Errorf("the wrapper wrote %d bytes, want %d", got, want)
	}
	if s.accepts.Load() != 1 {
		t.Errorf("%d connections, want 1", s.accepts.Load())
	}
}
