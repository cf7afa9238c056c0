package riptide_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/riptide-http/riptide"
	lb "github.com/riptide-http/riptide/internal/loopback"
	"github.com/riptide-http/riptide/middleware"
	"github.com/riptide-http/riptide/router"
)

// The in-memory counterpart of the harness's routed workload (wrk's
// request, no syscalls), against plaintext, to see what the router and
// the three middleware cost a request:
//
//	go test -run '^$' -bench 'Routed' -benchmem .
//
// For figures a loaded machine does not disturb, count instructions:
// valgrind --tool=callgrind on the test binary with -test.benchtime Nx
// for two values of N (GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1),
// and divide the difference by the difference of N.
const (
	routedRequest    = "GET /repos/golang/go/issues/42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
	plaintextRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
)

// routedApp is the harness's routed app (bench/internal/riptideroutes) on
// part of its route set: the issue route among siblings that share its
// prefix, behind Recover, RequestID and AccessLog at a disabled level.
func routedApp() riptide.Handler {
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := router.New()
	r.Use(middleware.Recover(quiet), middleware.RequestID(), middleware.AccessLog(quiet, slog.LevelInfo, nil))
	// The issue route answers as the harness app's routes do: its path
	// values joined by '/'. The others are there to be passed over.
	other := func(c *riptide.Ctx) { c.WriteString("other") }
	for _, p := range []string{
		"GET /authorizations/{id}", "GET /events", "GET /repos/{owner}/{repo}/events",
		"GET /networks/{owner}/{repo}/events", "GET /users/{user}/events/orgs/{org}",
		"GET /repos/{owner}/{repo}/notifications", "PUT /repos/{owner}/{repo}/notifications",
		"GET /repos/{owner}/{repo}/stargazers", "GET /user/starred/{owner}/{repo}",
		"GET /repos/{owner}/{repo}/subscribers", "GET /repos/{owner}/{repo}/subscription",
		"GET /gists/{id}",
	} {
		r.HandleFunc(p, other)
	}
	r.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}", func(c *riptide.Ctx) {
		c.SetContentType("text/plain; charset=utf-8")
		c.Write(c.PathValue("owner"))
		c.WriteString("/")
		c.Write(c.PathValue("repo"))
		c.WriteString("/")
		c.Write(c.PathValue("number"))
	})
	return r
}

// TestRoutedApp: the benchmark's request reaches its route, through the
// middleware.
func TestRoutedApp(t *testing.T) {
	t.Parallel()
	c := lb.DialConn(t, lb.Serve(t, routedApp()))
	resp, body := c.Send(routedRequest)
	if resp.StatusCode != 200 || body != "golang/go/42" || len(resp.Header.Get("X-Request-Id")) != 33 {
		t.Fatalf("%d %q, headers %v", resp.StatusCode, body, resp.Header)
	}
}

func BenchmarkRoutedApp(b *testing.B) { riptide.BenchServeMem(b, routedApp(), routedRequest) }

func BenchmarkRoutedPlaintext(b *testing.B) {
	riptide.BenchServeMem(b, riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/plain; charset=utf-8")
		c.WriteString("Hello, World!")
	}), plaintextRequest)
}
