package riptide

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestHijackConnectStream: over HTTP/2 Hijack takes over a plain CONNECT
// stream (RFC 9113 §8.5) as a byte stream: the 200 goes out, what the
// client sends comes back through the tunnel, the client's END_STREAM
// reads as io.EOF and Close ends the response. A CONNECT answered with a
// status set to a non-2xx is refused (ErrTunnelStatus, the status sent),
// and any other request's stream still gives ErrHijackHTTP2.
func TestHijackConnectStream(t *testing.T) {
	errs := make(chan error, 4)
	_, addr := startServer(t, &Server{HTTP2: &HTTP2Config{H2C: true}}, func(x *Ctx) {
		if string(x.Method()) != "CONNECT" {
			_, _, err := x.Hijack()
			errs <- err
			return
		}
		if x.HeaderString("X-Refuse") != "" {
			x.SetStatus(http.StatusForbidden)
			_, _, err := x.Hijack()
			errs <- err
			return
		}
		nc, buffered, err := x.Hijack()
		if err != nil || len(buffered) != 0 {
			errs <- err
			return
		}
		go func() {
			_, err := io.Copy(nc, nc) // until the client's END_STREAM
			errs <- err
			nc.Close()
		}()
	})
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(ctx, "CONNECT", "http://"+addr, pr)
	req.Host = "backend.example:443"
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d, want 200", resp.StatusCode)
	}
	for _, msg := range []string{"ping", string(bytes.Repeat([]byte("x"), 200_000))} {
		go pw.Write([]byte(msg))
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != msg {
			t.Fatalf("through the tunnel: %d bytes, %v; want %d bytes back", len(got), err, len(msg))
		}
	}
	pw.Close() // END_STREAM
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Errorf("after the client's END_STREAM: %q, %v; want the server's END_STREAM", rest, err)
	}
	if err := <-errs; err != nil {
		t.Errorf("server's copy: %v", err)
	}

	req, _ = http.NewRequestWithContext(ctx, "CONNECT", "http://"+addr, http.NoBody)
	req.Host = "backend.example:443"
	req.Header.Set("X-Refuse", "1")
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	req.Body = pr2
	if resp, err = tr.RoundTrip(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("refused CONNECT: %v, %v; want 403", resp, err)
	}
	if err := <-errs; !errors.Is(err, ErrTunnelStatus) {
		t.Errorf("Hijack with 403 set: %v, want ErrTunnelStatus", err)
	}

	req, _ = http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if resp, err = tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-errs; !errors.Is(err, ErrHijackHTTP2) {
		t.Errorf("Hijack on a GET stream: %v, want ErrHijackHTTP2", err)
	}
}
