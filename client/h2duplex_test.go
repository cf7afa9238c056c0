package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide/client"
)

// Full-duplex bodies, Expect: 100-continue and interim (1xx) responses
// over HTTP/2, against riptide's server and net/http's (h2c and TLS), and
// the 1xx hook over HTTP/1.1 too.

// noDuplexWait bounds the wait for a response head that only a full-duplex
// client gets before its body ends: a guard against hanging, not a timing
// assertion (the head comes at once when the client works).
const noDuplexWait = 20 * time.Second

// TestH2FullDuplex: a request body is sent while the response body is
// read. The handler echoes each piece of the body as it arrives; the
// client writes the next piece only after reading the echo of the last,
// through RoundTrip and DoStream, with the body an io.Pipe the test feeds.
func TestH2FullDuplex(t *testing.T) {
	for _, p := range h2Peers(t) {
		t.Run(p.name, func(t *testing.T) {
			t.Run("RoundTrip", func(t *testing.T) {
				pr, pw := io.Pipe()
				hreq, _ := http.NewRequest("POST", p.base+"/duplex", pr)
				hc := &http.Client{Transport: p.c}
				hresp := startDuplex(t, pw, func() (io.ReadCloser, error) {
					resp, err := hc.Do(hreq)
					if err != nil {
						return nil, err
					}
					if resp.ProtoMajor != 2 {
						return nil, fmt.Errorf("%s, want HTTP/2", resp.Proto)
					}
					return resp.Body, nil
				})
				pingPong(t, pw, hresp)
			})
			t.Run("DoStream", func(t *testing.T) {
				pr, pw := io.Pipe()
				var req client.Request
				var resp client.Response
				req.SetURL(p.base + "/duplex")
				req.SetMethod("POST")
				req.SetBodyStream(pr, -1)
				body := startDuplex(t, pw, func() (io.ReadCloser, error) {
					if err := p.c.DoStream(context.Background(), &req, &resp); err != nil {
						return nil, err
					}
					return resp.BodyStream(), nil
				})
				pingPong(t, pw, body)
			})
		})
	}
}

// startDuplex runs do, which sends a request whose body (fed by pw) is
// still open, and returns the response body it got.
func startDuplex(t *testing.T, pw *io.PipeWriter, do func() (io.ReadCloser, error)) io.ReadCloser {
	t.Helper()
	type result struct {
		body io.ReadCloser
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := do()
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.body
	case <-time.After(noDuplexWait):
		pw.CloseWithError(io.ErrClosedPipe) // lets the request end
		t.Fatalf("no response head in %v while the request body was open: the body is sent before the response is read", noDuplexWait)
		return nil
	}
}

// pingPong writes five pieces of the body, each after reading the echo of
// the one before, then ends the body and expects the response to end.
func pingPong(t *testing.T, pw *io.PipeWriter, body io.ReadCloser) {
	t.Helper()
	defer body.Close()
	for i := range 5 {
		msg := fmt.Sprintf("ping %d\n", i)
		if _, err := pw.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(body, got); err != nil || string(got) != msg {
			t.Fatalf("echo %d: %q %v, want %q", i, got, err, msg)
		}
	}
	pw.Close()
	rest, err := io.ReadAll(body)
	if err != nil || len(rest) != 0 {
		t.Fatalf("after the body ended: %q %v, want the end of the response", rest, err)
	}
}

// recordingBody is a request body that records, in events, that it was
// read.
type recordingBody struct {
	r      io.Reader
	mu     *sync.Mutex
	events *[]string
}

func (b recordingBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if n := len(*b.events); n == 0 || (*b.events)[n-1] != "read" {
		*b.events = append(*b.events, "read")
	}
	b.mu.Unlock()
	return b.r.Read(p)
}

// TestH2ExpectContinue: with Expect: 100-continue the body waits for the
// server's 100 (ExpectContinueTimeout is a minute: only the 100 lets it
// go); a final status before any 100 means the body is never read. Over
// HTTP/2 against riptide's server and net/http's, and over HTTP/1.1
// against the same servers, through Do and RoundTrip.
func TestH2ExpectContinue(t *testing.T) {
	peers := h2Peers(t)
	peers = append(peers, h1Peers(t)...)
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			p.c.ExpectContinueTimeout = time.Minute
			for _, api := range []string{"Do", "RoundTrip"} {
				t.Run(api, func(t *testing.T) {
					var mu sync.Mutex
					var events []string
					trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
						mu.Lock()
						events = append(events, fmt.Sprint(code))
						mu.Unlock()
						return nil
					}}
					ctx := httptrace.WithClientTrace(context.Background(), trace)
					send := func(path string) (int, string) {
						body := recordingBody{strings.NewReader("expected body"), &mu, &events}
						if api == "Do" {
							var req client.Request
							var resp client.Response
							req.SetURL(p.base + path)
							req.SetMethod("POST")
							req.AddHeader("Expect", "100-continue")
							req.SetBodyStream(body, int64(len("expected body")))
							if err := p.c.Do(ctx, &req, &resp); err != nil {
								t.Fatal(err)
							}
							return resp.StatusCode(), string(resp.Body())
						}
						hreq, _ := http.NewRequestWithContext(ctx, "POST", p.base+path, io.NopCloser(body))
						hreq.ContentLength = int64(len("expected body"))
						hreq.Header.Set("Expect", "100-continue")
						hresp, err := (&http.Client{Transport: p.c}).Do(hreq)
						if err != nil {
							t.Fatal(err)
						}
						b, _ := io.ReadAll(hresp.Body)
						hresp.Body.Close()
						return hresp.StatusCode, string(b)
					}
					status, body := send("/echo")
					mu.Lock()
					got := strings.Join(events, ",")
					events = nil
					mu.Unlock()
					if status != 200 || body != "expected body" || got != "100,read" {
						t.Errorf("echo: %d %q, events %q, want 200 %q after 100,read", status, body, got, "expected body")
					}
					status, _ = send("/reject")
					mu.Lock()
					got = strings.Join(events, ",")
					mu.Unlock()
					if status != http.StatusExpectationFailed || got != "" {
						t.Errorf("reject: %d, events %q, want 417 and the body never read", status, got)
					}
				})
			}
		})
	}
}

// TestH21xxResponses: an interim response (103 Early Hints with a Link
// field) reaches the caller through httptrace.ClientTrace.Got1xxResponse,
// then the final response; through Do and RoundTrip, over HTTP/2 and
// HTTP/1.1, against riptide's server and net/http's. An error from the
// hook fails the request.
func TestH21xxResponses(t *testing.T) {
	peers := h2Peers(t)
	peers = append(peers, h1Peers(t)...)
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			for _, api := range []string{"Do", "RoundTrip"} {
				t.Run(api, func(t *testing.T) {
					var got []string
					trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
						got = append(got, fmt.Sprintf("%d %s", code, h.Get("Link")))
						return nil
					}}
					ctx := httptrace.WithClientTrace(context.Background(), trace)
					status, body, proto, err := get1xx(ctx, p, api)
					if err != nil {
						t.Fatal(err)
					}
					want := "103 </style.css>; rel=preload"
					if len(got) != 1 || got[0] != want || status != 200 || body != "hello" || !strings.HasPrefix(p.name, "h1") && proto != 2 {
						t.Fatalf("got 1xx %q then %d %q (HTTP/%d), want [%q] then 200 %q", got, status, body, proto, want, "hello")
					}
					// The hook's error fails the request.
					stop := fmt.Errorf("no early hints wanted")
					trace = &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error { return stop }}
					ctx = httptrace.WithClientTrace(context.Background(), trace)
					if _, _, _, err := get1xx(ctx, p, api); err == nil || !strings.Contains(err.Error(), stop.Error()) {
						t.Fatalf("hook error: request ended with %v, want %v", err, stop)
					}
				})
			}
		})
	}
}

// get1xx GETs p's /early through api.
func get1xx(ctx context.Context, p h2Peer, api string) (status int, body string, proto int, err error) {
	if api == "Do" {
		var req client.Request
		var resp client.Response
		req.SetURL(p.base + "/early")
		if err := p.c.Do(ctx, &req, &resp); err != nil {
			return 0, "", 0, err
		}
		return resp.StatusCode(), string(resp.Body()), resp.ProtoMajor(), nil
	}
	hreq, _ := http.NewRequestWithContext(ctx, "GET", p.base+"/early", nil)
	hresp, err := (&http.Client{Transport: p.c}).Do(hreq)
	if err != nil {
		return 0, "", 0, err
	}
	b, err := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	return hresp.StatusCode, string(b), hresp.ProtoMajor, err
}
