package riptide_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestCannedAnswerSameOnBothProtocols: a request no handler sees gets the
// same answer, status, Content-Type and body, over HTTP/1.1 and over
// HTTP/2 (h2c), whichever door serves it: 413 for a declared body over
// MaxRequestBodySize, 431 for more fields than MaxHeaderCount.
func TestCannedAnswerSameOnBothProtocols(t *testing.T) {
	t.Parallel()
	doors := []struct {
		name string
		h    riptide.Handler
	}{
		{"native", riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("handler ran") })},
		{"compat", riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "handler ran")
		}))},
	}
	for _, door := range doors {
		t.Run(door.name, func(t *testing.T) {
			srv := &riptide.Server{
				Handler:            door.h,
				MaxRequestBodySize: 10,
				MaxHeaderCount:     8,
				HTTP2:              &riptide.HTTP2Config{H2C: true},
				Logger:             slog.New(slog.DiscardHandler),
			}
			url := "http://" + riptide.ServeTest(t, srv, riptide.TestServeOptions{}).Addr + "/"

			h1 := &http.Transport{DisableKeepAlives: true}
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			h2 := &http.Transport{Protocols: &p}
			t.Cleanup(h1.CloseIdleConnections)
			t.Cleanup(h2.CloseIdleConnections)

			for _, tc := range []struct {
				name string
				req  func() *http.Request
				want int
			}{
				{"body over MaxRequestBodySize", func() *http.Request {
					r, _ := http.NewRequest("POST", url, strings.NewReader(strings.Repeat("x", 100)))
					return r
				}, 413},
				{"more fields than MaxHeaderCount", func() *http.Request {
					r, _ := http.NewRequest("GET", url, nil)
					for i := range 20 {
						r.Header.Set(fmt.Sprintf("X-Field-%d", i), "v")
					}
					return r
				}, 431},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var got [2]string
					for i, rt := range []http.RoundTripper{h1, h2} {
						c := &http.Client{Transport: rt, Timeout: 10 * time.Second}
						resp, err := c.Do(tc.req())
						if err != nil {
							t.Fatal(err)
						}
						b, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil {
							t.Fatal(err)
						}
						if want := []int{1, 2}[i]; resp.ProtoMajor != want {
							t.Fatalf("answered over HTTP/%d, want HTTP/%d", resp.ProtoMajor, want)
						}
						if resp.StatusCode != tc.want {
							t.Errorf("HTTP/%d: status %d, want %d (body %q)", resp.ProtoMajor, resp.StatusCode, tc.want, b)
						}
						got[i] = fmt.Sprintf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
					}
					if got[0] != got[1] {
						t.Errorf("canned answers differ:\nHTTP/1.1: %s\nHTTP/2:   %s", got[0], got[1])
					}
				})
			}
		})
	}
}
