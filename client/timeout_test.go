package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// hangServer reads requests and never answers until the test ends.
func hangServer(t *testing.T) *rawServer {
	done := make(chan struct{})
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		<-done
		return false
	})
	t.Cleanup(func() { close(done) }) // runs before the server's cleanup
	return s
}

func TestResponseHeaderTimeout(t *testing.T) {
	s := hangServer(t)
	c := &Client{ResponseHeaderTimeout: 20 * time.Millisecond}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	err := c.Do(context.Background(), &req, &resp)
	if !errors.Is(err, ErrResponseHeaderTimeout) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrResponseHeaderTimeout", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v is not a net.Error timeout", err)
	}
}

func TestWholeRequestTimeoutCoversBody(t *testing.T) {
	s := stalledBodyServer(t)
	c := &Client{Timeout: 30 * time.Millisecond, ResponseHeaderTimeout: time.Hour}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrRequestTimeout) {
		t.Fatalf("got %v, want ErrRequestTimeout", err)
	}
}

func TestDialTimeout(t *testing.T) {
	c := &Client{
		DialTimeout: 20 * time.Millisecond,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			<-ctx.Done() // a dial that never completes
			return nil, ctx.Err()
		},
	}
	var req Request
	var resp Response
	req.SetURL("http://127.0.0.1:1/")
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrDialTimeout) {
		t.Fatalf("got %v, want ErrDialTimeout", err)
	}
}

func TestTLSHandshakeTimeout(t *testing.T) {
	// A listener that accepts TCP connections and never speaks TLS.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	c := &Client{TLSHandshakeTimeout: 20 * time.Millisecond}
	var req Request
	var resp Response
	req.SetURL("https://" + ln.Addr().String() + "/")
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrTLSHandshakeTimeout) {
		t.Fatalf("got %v, want ErrTLSHandshakeTimeout", err)
	}
}

func TestContextCancelWhileWaitingForHead(t *testing.T) {
	s := hangServer(t)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.reqs.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if err := c.Do(ctx, &req, &resp); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if total, _ := req.pool.stats(); total != 0 {
		t.Fatalf("cancelled connection kept: %d open", total)
	}
}

func TestContextDeadline(t *testing.T) {
	s := hangServer(t)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Do(ctx, &req, &resp); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestContextAlreadyDone(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Do(ctx, &req, &resp); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestRoundTripContextCancelDuringBody(t *testing.T) {
	s := stalledBodyServer(t)
	hc := &http.Client{Transport: &Client{}}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url("/"), nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
	resp.Body.Close()
}

func TestRoundTripCloseUnblocksRead(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"))
		<-done
		return false
	})
	resp, err := (&http.Client{Transport: &Client{}}).Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error)
	go func() {
		_, err := io.ReadAll(resp.Body)
		readErr <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the read block (not required for correctness)
	resp.Body.Close()
	if err := <-readErr; err == nil {
		t.Fatal("read of a closed body succeeded")
	}
}

// stalledBodyServer answers with the head and 7 of 100 body bytes, then
// sends nothing more until the test ends.
func stalledBodyServer(t *testing.T) *rawServer {
	done := make(chan struct{})
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"))
		<-done
		return false
	})
	t.Cleanup(func() { close(done) }) // runs before the server's own cleanup
	return s
}
