package riptide

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestSetBodyLimit: a declared or chunked body over the per-request limit
// fails with ErrBodyTooLarge and an unanswered request gets 413; bodies
// within it read whole, and a later request has the server's limit again.
func TestSetBodyLimit(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/limited" {
			c.SetBodyLimit(10)
		}
		body, err := c.ReadBody()
		if err != nil {
			if err != ErrBodyTooLarge {
				t.Errorf("%s: ReadBody error %v, want ErrBodyTooLarge", c.Path(), err)
			}
			return
		}
		c.Write(body)
	})
	for _, tc := range []struct {
		name, path, body string
		chunked          bool
		code             int
	}{
		{"declared, within", "/limited", "0123456789", false, 200},
		{"declared, over", "/limited", "0123456789a", false, 413},
		{"chunked, within", "/limited", "0123456789", true, 200},
		{"chunked, over", "/limited", "0123456789abc", true, 413},
		{"no limit set", "/other", strings.Repeat("x", 100), true, 200},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		req := "POST " + tc.path + " HTTP/1.1\r\nHost: x\r\n"
		if tc.chunked { // in two chunks, so that the limit is crossed mid-body
			h := len(tc.body) / 2
			req += "Transfer-Encoding: chunked\r\n\r\n" + chunk(tc.body[:h]) + chunk(tc.body[h:]) + "0\r\n\r\n"
		} else {
			req += "Content-Length: " + strconv.Itoa(len(tc.body)) + "\r\n\r\n" + tc.body
		}
		io.WriteString(nc, req)
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		nc.Close()
		if resp.StatusCode != tc.code || tc.code == 200 && string(got) != tc.body {
			t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, got, tc.code)
		}
	}
}

func chunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
