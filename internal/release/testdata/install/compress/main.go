// Command compress is the install test's program for the compress module
// alone: a module outside the repository that ran only
// `go get github.com/riptide-http/riptide/compress@VERSION` serves a
// gzip-compressed response over HTTP/1.1 and fetches it from itself.
package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/compress"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run() error {
	text := strings.Repeat("hello, compressed world\n", 100)
	h := riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/plain")
		c.WriteString(text)
	})
	srv := &riptide.Server{Handler: compress.New(compress.Config{})(h)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	req, err := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if ce := res.Header.Get("Content-Encoding"); ce != "gzip" {
		return fmt.Errorf("Content-Encoding %q, want gzip", ce)
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	if string(body) != text {
		return fmt.Errorf("decompressed body is %d bytes, want %d", len(body), len(text))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return err
	}
	<-done
	fmt.Printf("ok %s: HTTP/1.1 gzip, %d bytes decoded\n", riptide.Version, len(body))
	return nil
}
