package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// The tests in this file play a malicious or broken server against the
// client (issue 14): each checks one defence.

// answerAndClose returns a handler that writes resp and closes the
// connection.
func answerAndClose(resp string) func(net.Conn, *h1.Request, []byte) bool {
	return func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte(resp))
		return false
	}
}

// TestBodyNotSizedFromContentLength: a peer's Content-Length is a claim,
// not a size to allocate. A 3-byte body under an enormous declared length
// must end in io.ErrUnexpectedEOF (as with net/http), not an out-of-memory
// crash or a makeslice panic.
func TestBodyNotSizedFromContentLength(t *testing.T) {
	for _, cl := range []string{"100000000000", "4611686018427387904"} {
		t.Run(cl, func(t *testing.T) {
			s := newRawServer(t, answerAndClose("HTTP/1.1 200 OK\r\nContent-Length: "+cl+"\r\n\r\nabc"))
			c := &Client{MaxResponseBodySize: -1} // unlimited: only the allocation is under test
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Do: %v, want io.ErrUnexpectedEOF", err)
			}
			if cap(resp.body) > 1<<20 {
				t.Fatalf("body buffer of %d bytes allocated for a 3-byte body", cap(resp.body))
			}
			// RoundTrip streams: the claim reaches ContentLength, the read fails.
			hr, err := (&http.Client{Transport: &Client{}}).Get(s.url("/"))
			if err != nil {
				t.Fatal(err)
			}
			defer hr.Body.Close()
			if _, err := io.ReadAll(hr.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("RoundTrip body: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}
