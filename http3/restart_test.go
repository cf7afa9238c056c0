package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
)

// getAsync GETs url with cl on a goroutine of its own; the channel gets
// the body, or the error's text.
func getAsync(cl *http.Client, url string) <-chan string {
	res := make(chan string, 1)
	go func() {
		resp, err := cl.Get(url)
		if err != nil {
			res <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- string(b)
	}()
	return res
}

// finishShutdown releases the handler a graceful Shutdown waits for and
// checks that its request ends with "done", Shutdown with nil and Serve
// with ErrServerClosed.
func finishShutdown(t *testing.T, unblock func(), res <-chan string, shut, served <-chan error) {
	t.Helper()
	unblock()
	if got := <-res; got != "done" {
		t.Fatalf("request in flight: %q, want done", got)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, riptide.ErrServerClosed) {
		t.Fatalf("Serve returned %v, want ErrServerClosed", err)
	}
}

// TestShutdownRefusesNewConnections: while Shutdown waits for the open
// HTTP/3 connections (a restart hands the port over and drains), a new
// QUIC connection is refused with CONNECTION_REFUSED rather than left
// unanswered until the client's handshake timeout (5 s in browsers and
// quic-go: the closed listener's transport dropped its packets).
func TestShutdownRefusesNewConnections(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	srv := &riptide.Server{Logger: discardLogger(), Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		started <- struct{}{}
		<-release
		x.WriteString("done")
	})}
	addr, served := startServe(t, srv, nil)
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	res := getAsync(h3Client(t), "https://"+addr+"/hold")
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	for !srv.Draining() {
		time.Sleep(time.Millisecond)
	}
	// Until the listener has closed, a new connection may still be
	// accepted (and then sent GOAWAY); after that it must be refused.
	var err error
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var qc *quic.Conn
		qc, err = quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}},
			&quic.Config{HandshakeIdleTimeout: 3 * time.Second})
		cancel()
		if err != nil {
			break
		}
		qc.CloseWithError(0, "")
		time.Sleep(5 * time.Millisecond)
	}
	var te *quic.TransportError
	if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused || !te.Remote {
		t.Fatalf("a new connection during Shutdown: %v, want the server's CONNECTION_REFUSED", err)
	}
	finishShutdown(t, unblock, res, shut, served)
}
