package client

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// The allocation tests measure with testing.AllocsPerRun, which counts every
// allocation in the process. The server is rawServer with a fixed response:
// its read loop reuses per-connection buffers and its handler writes a
// constant slice, so it allocates nothing per request, and the counts below
// are the client's alone. (Without -race: the race detector allocates.)

func TestAllocsNativeGet(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	s := newRawServer(t, fixed(helloResp))
	var c Client
	var req Request
	var resp Response
	req.SetURL(s.url("/plaintext"))
	req.AddHeader("Accept", "text/plain")
	ctx := context.Background()
	do := func() {
		if err := c.Do(ctx, &req, &resp); err != nil || string(resp.Body()) != "Hello, World!" {
			t.Fatalf("Do: %v %q", err, resp.Body())
		}
	}
	do()
	if n := testing.AllocsPerRun(1000, do); n != 0 {
		t.Errorf("native keep-alive GET: %v allocs/op, want 0", n)
	}
	// POST with a body and a chunked response, for good measure.
	s2 := newRawServer(t, fixed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"))
	var req2 Request
	req2.SetURL(s2.url("/echo"))
	req2.SetMethod("POST")
	req2.SetBodyString("some request body")
	post := func() {
		if err := c.Do(ctx, &req2, &resp); err != nil || string(resp.Body()) != "hello" || string(resp.Trailer("x-t")) != "1" {
			t.Fatalf("Do: %v %q", err, resp.Body())
		}
	}
	post()
	if n := testing.AllocsPerRun(1000, post); n != 0 {
		t.Errorf("native keep-alive POST, chunked response: %v allocs/op, want 0", n)
	}
}

func TestAllocsRoundTripVsNetHTTP(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	s := newRawServer(t, fixed(helloResp))
	url := s.url("/plaintext")
	measure := func(rt http.RoundTripper) float64 {
		hc := &http.Client{Transport: rt}
		get := func() {
			resp, err := hc.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get()
		return testing.AllocsPerRun(500, get)
	}
	std := measure(&http.Transport{})
	ours := measure(&Client{})
	t.Logf("allocs/op through http.Client.Get: net/http Transport %.0f, riptide %.0f", std, ours)
	if ours >= std/2 {
		t.Errorf("riptide RoundTripper: %.0f allocs/op, want fewer than half of net/http's %.0f", ours, std)
	}
	// The bare RoundTrip, without http.Client's own allocations.
	rtOnly := func(rt http.RoundTripper) float64 {
		req, _ := http.NewRequest("GET", url, nil)
		rt1 := func() {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		rt1()
		return testing.AllocsPerRun(500, rt1)
	}
	std, ours = rtOnly(&http.Transport{}), rtOnly(&Client{})
	t.Logf("allocs/op of RoundTrip alone: net/http Transport %.0f, riptide %.0f", std, ours)
	if ours >= std/2 {
		t.Errorf("riptide RoundTrip: %.0f allocs/op, want fewer than half of net/http's %.0f", ours, std)
	}
}
