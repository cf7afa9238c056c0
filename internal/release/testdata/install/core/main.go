// Command core is the install test's program for the core module alone: a
// module outside the repository that ran only
// `go get github.com/riptide-http/riptide@VERSION` serves a native handler
// over HTTP/1.1 and fetches from itself.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/riptide-http/riptide"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run() error {
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/plain")
		c.WriteString("hello " + riptide.Version)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if want := "hello " + riptide.Version; res.Proto != "HTTP/1.1" || string(body) != want {
		return fmt.Errorf("got %s %q, want HTTP/1.1 %q", res.Proto, body, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return err
	}
	<-done
	fmt.Printf("ok %s: HTTP/1.1 %q\n", riptide.Version, body)
	return nil
}
