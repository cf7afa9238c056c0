package riptide_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestH2CompatWriter checks the compat door's ResponseWriter over HTTP/2
// against net/http's rules: the head is what the map held at WriteHeader,
// trailers (declared and http.TrailerPrefix), 1xx, ResponseController
// (Flush, deadlines, full duplex, Hijack refused), a body shorter than its
// Content-Length reset, request trailers, Context cancelled on reset.
func TestH2CompatWriter(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/late-header", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
		w.Header().Set("X-Late", "1") // too late: not sent
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Declared")
		io.WriteString(w, "body")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Declared", "a")
		w.Header().Set(http.TrailerPrefix+"X-Prefixed", "b")
		w.Header().Set(http.TrailerPrefix+"Content-Length", "9") // forbidden: dropped
	})
	mux.HandleFunc("/early-hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	})
	mux.HandleFunc("/controller", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		var errs []string
		for _, err := range []error{rc.EnableFullDuplex(), rc.SetReadDeadline(time.Now().Add(time.Minute)), rc.SetWriteDeadline(time.Now().Add(time.Minute)), rc.Flush()} {
			if err != nil {
				errs = append(errs, err.Error())
			}
		}
		if _, _, err := rc.Hijack(); err == nil {
			errs = append(errs, "Hijack succeeded")
		}
		io.WriteString(w, strings.Join(errs, ";"))
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "abc")
	})
	mux.HandleFunc("/req-trailers", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, r.Trailer.Get("X-Sum"))
	})
	mux.HandleFunc("/cancel", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		cancelled <- struct{}{}
	})
	h := riptide.FromHTTP(mux)
	for _, useTLS := range []bool{false, true} {
		in := startRiptideTarget(t, "compat-writer", h, useTLS)
		t.Run(in.mode(), func(t *testing.T) {
			c := h2Client(t, in)
			get := func(path string) (*http.Response, string, error) { return getBody(c, in.url(path)) }
			if resp, b, err := get("/late-header"); err != nil || resp.StatusCode != 201 || b != "ok" || resp.Header.Get("X-Late") != "" {
				t.Errorf("late header: %v %q %v", resp, b, err)
			}
			if resp, b, err := get("/trailers"); err != nil || b != "body" || resp.Trailer.Get("X-Declared") != "a" ||
				resp.Trailer.Get("X-Prefixed") != "b" || resp.Trailer.Get("Content-Length") != "" {
				t.Errorf("trailers: %q %v %v", b, err, resp.Trailer)
			}
			var hints []int
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				hints = append(hints, code)
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", in.url("/early-hints"), nil)
			if resp, err := c.Do(req); err != nil {
				t.Error(err)
			} else {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "final" || len(hints) != 1 || hints[0] != 103 {
					t.Errorf("1xx: %q, interim %v", b, hints)
				}
			}
			if _, b, err := get("/controller"); err != nil || b != "" {
				t.Errorf("ResponseController: %q %v", b, err)
			}
			if _, b, err := get("/short"); err == nil {
				t.Errorf("short body: got %q without an error, want a reset stream", b)
			}
			req, _ = http.NewRequest("POST", in.url("/req-trailers"), io.MultiReader(strings.NewReader("x")))
			req.Trailer = http.Header{"X-Sum": {"7"}}
			if resp, err := c.Do(req); err != nil {
				t.Error(err)
			} else {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "7" {
					t.Errorf("request trailers: %q", b)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			req, _ = http.NewRequestWithContext(ctx, "GET", in.url("/cancel"), nil)
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
			select {
			case <-cancelled:
			case <-time.After(h2AttackBound):
				t.Error("the request Context was not cancelled when the client reset the stream")
			}
		})
	}
}

// TestH2CompatBodyCloseUnblocksRead is grpc-go's ServeHTTP pattern: a
// goroutine blocks reading the request body while the client keeps the
// stream open; the handler closes the body and waits for that goroutine
// before it returns. Close must make the blocked Read return, or the
// handler (and its response) never finishes.
func TestH2CompatBodyCloseUnblocksRead(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[useTLS], func(t *testing.T) {
			readErr := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got := make(chan struct{})
				readerDone := make(chan struct{})
				go func() {
					defer close(readerDone)
					buf := make([]byte, 100)
					n, _ := r.Body.Read(buf) // the first chunk
					if n > 0 {
						close(got)
					}
					_, err := r.Body.Read(buf) // blocks: the client sends no more
					readErr <- err
				}()
				<-got
				w.Header().Set("Trailer", "X-Status")
				_, _ = io.WriteString(w, "done")
				w.(http.Flusher).Flush()
				r.Body.Close()
				select {
				case <-readerDone:
					w.Header().Set("X-Status", "0")
				case <-time.After(10 * time.Second):
					w.Header().Set("X-Status", "read still blocked after Close")
				}
			})
			target := h2Target{name: "riptide-compat", serve: func(t testing.TB, tlsConf *tls.Config, _ *h2App) string {
				return serveRiptideHandler(t, tlsConf, riptide.FromHTTP(h))
			}}
			in := startH2(t, target, useTLS)
			pr, pw := io.Pipe()
			defer pw.Close()
			go func() { _, _ = pw.Write([]byte("first")) }() // then nothing, never the end
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", in.url("/"), pr)
			resp, err := h2Client(t, in).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(body) != "done" || resp.Trailer.Get("X-Status") != "0" {
				t.Fatalf("response: %q, trailer %q, err %v; want \"done\" with trailer X-Status: 0", body, resp.Trailer.Get("X-Status"), err)
			}
			if err := <-readErr; err == nil {
				t.Errorf("Read after Close returned no error")
			}
		})
	}
}

// TestH2CompatCookieAndExpect checks net/http's HTTP/2 rules for a
// request Header through the compat door: the Cookie fields a client
// splits (Go's does, RFC 9113 §8.2.3) are joined into one value with
// "; ", and "Expect: 100-continue" is answered by the server and removed,
// while another Expect stays.
func TestH2CompatCookieAndExpect(t *testing.T) {
	t.Parallel()
	h := riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, strings.Join(r.Header["Cookie"], "|")+" expect="+strings.Join(r.Header["Expect"], "|"))
	}))
	in := startRiptideTarget(t, "compat-cookie", h, false)
	c := h2Client(t, in)
	for _, tc := range []struct {
		cookie, expect, body, want string
	}{
		{"a=1; b=2; c=3", "", "", "a=1; b=2; c=3 expect="},
		{"a=1", "", "", "a=1 expect="},
		{"a=1; b=2", "100-continue", "x", "a=1; b=2 expect="},
		{"", "something", "", " expect=something"},
	} {
		req, _ := http.NewRequest("POST", in.url("/"), strings.NewReader(tc.body))
		if tc.cookie != "" {
			req.Header.Set("Cookie", tc.cookie)
		}
		if tc.expect != "" {
			req.Header.Set("Expect", tc.expect)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("Cookie %q, Expect %q: handler saw %q, want %q", tc.cookie, tc.expect, b, tc.want)
		}
	}
}
