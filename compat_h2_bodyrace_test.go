package riptide_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestH2CompatBodyReadAfterReturn checks a compat handler that leaves
// r.Body to a goroutine and returns while that goroutine's Read waits for
// the client (net/http allows the goroutine; the Read must then fail). The
// HTTP/2 stream is pooled: once the client ends the abandoned body, the
// stream object serves later requests on the connection, and the late
// Read must not return (or take) their body bytes, must not hang, and must
// end with an error.
func TestH2CompatBodyReadAfterReturn(t *testing.T) {
	const rounds = 40
	type lateResult struct {
		got []byte // bytes the goroutine read after the handler returned
		err error  // the error its reads ended with
	}
	late := make(chan lateResult, rounds)
	mux := http.NewServeMux()
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		first := make(chan struct{})
		var returned sync.WaitGroup
		returned.Add(1)
		go func() {
			buf := make([]byte, 64)
			n, _ := io.ReadFull(r.Body, buf[:5]) // "first"
			if n == 5 {
				close(first)
			}
			// This Read waits: the client sends nothing more until it has
			// the response, which ends when the handler returns.
			var res lateResult
			for {
				n, err := r.Body.Read(buf)
				res.got = append(res.got, buf[:n]...)
				if err != nil {
					res.err = err
					break
				}
			}
			returned.Wait()
			late <- res
		}()
		<-first
		time.Sleep(time.Millisecond) // let the goroutine's Read start waiting
		io.WriteString(w, "bye")
		returned.Done()
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write(b)
	})
	target := h2Target{name: "riptide-compat", serve: func(t testing.TB, tlsConf *tls.Config, _ *h2App) string {
		return serveRiptideHandler(t, tlsConf, riptide.FromHTTP(mux))
	}}
	in := startH2(t, target, false)
	client := h2Client(t, in)
	for round := range rounds {
		pr, pw := io.Pipe()
		go pw.Write([]byte("first"))
		resp, err := client.Post(in.url("/late"), "text/plain", pr)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "bye" {
			t.Fatalf("round %d: /late answered %q, %v", round, body, err)
		}
		// The handler has returned; its goroutine may still wait in Read.
		// End the abandoned body (the stream is then done with and
		// reused) while other requests send theirs.
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := bytes.Repeat([]byte(fmt.Sprintf("B%d-%d.", round, i)), 8)
				bpr, bpw := io.Pipe()
				go func() {
					for c := range slices.Chunk(want, 7) {
						bpw.Write(c)
						time.Sleep(100 * time.Microsecond)
					}
					bpw.Close()
				}()
				resp, err := client.Post(in.url("/echo"), "text/plain", bpr)
				if err != nil {
					errs <- err
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("round %d: echo got %d %q (%v), want %q", round, resp.StatusCode, got, err, want)
				}
			}()
		}
		pw.Close()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		select {
		case res := <-late:
			if len(res.got) > 0 {
				t.Errorf("round %d: a Read after the handler returned gave %q", round, res.got)
			}
			if !errors.Is(res.err, http.ErrBodyReadAfterClose) {
				t.Errorf("round %d: a Read after the handler returned ended with %v, want %v", round, res.err, http.ErrBodyReadAfterClose)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a Read left waiting when the handler returned did not return", round)
		}
		if t.Failed() {
			return
		}
	}
}
