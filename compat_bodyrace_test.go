package riptide_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicxtest"
)

// TestCompatBodyReadAfterReturn checks a compat handler that leaves
// r.Body to a goroutine and returns while that goroutine's Read waits for
// the client (net/http allows the goroutine; the Read must then fail), on
// HTTP/2 and HTTP/3: the same contract (bodyReader.endReads and the
// exchange's stopBody). The stream's state is pooled (HTTP/2's stream
// object, HTTP/3's exchange, the conn of both): once the client ends the
// abandoned body, it serves later requests on the connection, and the
// late Read must not return (or take) their body bytes, must not hang,
// and must end with an error.
func TestCompatBodyReadAfterReturn(t *testing.T) {
	t.Parallel()
	t.Run("h2", func(t *testing.T) {
		mux, late := lateReadMux()
		target := h2Target{name: "riptide-compat", serve: func(t testing.TB, tlsConf *tls.Config, _ *h2App) string {
			return serveRiptideHandler(t, tlsConf, riptide.FromHTTP(mux))
		}}
		in := startH2(t, target, false)
		testBodyReadAfterReturn(t, h2Client(t, in), in.url, late)
	})
	t.Run("h3", func(t *testing.T) {
		mux, late := lateReadMux()
		srv := &riptide.Server{Handler: riptide.FromHTTP(mux), Logger: slog.New(slog.DiscardHandler)}
		testBodyReadAfterReturn(t, h3PipeClient(t, srv), func(path string) string { return "https://example.com" + path }, late)
	})
}

// lateResult is what the goroutine a /late handler leaves reading its body
// saw after the handler returned.
type lateResult struct {
	got []byte // bytes the goroutine read after the handler returned
	err error  // the error its reads ended with
}

// lateReadMux serves /late, which returns while a goroutine it started
// waits in r.Body.Read (its result to late), and /echo.
func lateReadMux() (mux *http.ServeMux, late chan lateResult) {
	late = make(chan lateResult, 64)
	mux = http.NewServeMux()
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
	return mux, late
}

// testBodyReadAfterReturn runs the rounds of TestCompatBodyReadAfterReturn
// against lateReadMux with client; url makes a request URL of a path, and
// late is the mux's.
func testBodyReadAfterReturn(t *testing.T, client *http.Client, url func(string) string, late chan lateResult) {
	const rounds = 40
	for round := range rounds {
		pr, pw := io.Pipe()
		go pw.Write([]byte("first"))
		resp, err := client.Post(url("/late"), "text/plain", pr)
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
				resp, err := client.Post(url("/echo"), "text/plain", bpr)
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

// h3PipeClient serves srv's HTTP/3 side on one in-memory connection
// (quicxtest: no QUIC, no sockets) until the test ends, and returns a
// client whose requests are streams on it, framed with the h3 codec.
func h3PipeClient(t *testing.T, srv *riptide.Server) *http.Client {
	t.Helper()
	l, err := srv.ListenQUIC(riptide.QUICOptions{AltSvcPort: 443, AltSvcMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sc, cc := quicxtest.Pair(quicxtest.Options{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		l.ServeConn(sc)
	}()
	t.Cleanup(func() {
		cc.CloseWithError(0, "test over")
		<-served
		l.Close()
	})
	ctl, err := cc.OpenUni()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Write(append(h3.AppendVarint(nil, 0), h3.AppendSettings(nil, &h3.Settings{})...)); err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: h3PipeTransport{cc: cc}}
}

// h3PipeTransport sends each request on a new stream of an in-memory
// HTTP/3 connection: HEADERS, the body as DATA frames as it comes (on a
// goroutine, until the server stops reading it), and reads the response
// to the stream's end. dataFrames, when set, counts the response DATA
// frames read; writes, when set, gets the number of Write calls the server
// made on the response's stream.
type h3PipeTransport struct {
	cc         *quicxtest.Conn
	dataFrames *atomic.Int64
	writes     *atomic.Int64
}

// countH3Pipe makes c, an h3PipeClient, count the response DATA frames in
// dataFrames and the server's stream writes in writes (each when not nil).
func countH3Pipe(c *http.Client, dataFrames, writes *atomic.Int64) {
	tr := c.Transport.(h3PipeTransport)
	tr.dataFrames, tr.writes = dataFrames, writes
	c.Transport = tr
}

func (tr h3PipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
	defer cancel()
	s, err := tr.cc.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	sec := h3.AppendFieldSectionPrefix(nil)
	for _, f := range [][2]string{{":method", req.Method}, {":scheme", "https"}, {":authority", req.URL.Host}, {":path", req.URL.RequestURI()}} {
		sec = h3.AppendField(sec, f[0], f[1], false)
	}
	for name, vs := range req.Header {
		for _, v := range vs {
			sec = h3.AppendField(sec, name, v, false)
		}
	}
	if _, err := s.Write(append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)); err != nil {
		return nil, err
	}
	if req.Body == nil {
		s.Close()
	} else {
		go func() {
			defer req.Body.Close()
			buf := make([]byte, 4<<10)
			for {
				n, err := req.Body.Read(buf)
				if n > 0 {
					if _, werr := s.Write(append(h3.AppendFrameHeader(nil, h3.FrameData, uint64(n)), buf[:n]...)); werr != nil {
						return // the server stopped reading the body
					}
				}
				if err != nil {
					s.Close()
					return
				}
			}
		}()
	}
	raw, err := io.ReadAll(s)
	if err != nil {
		return nil, err
	}
	if tr.writes != nil {
		tr.writes.Store(int64(s.PeerWrites()))
	}
	resp := &http.Response{Proto: "HTTP/3.0", ProtoMajor: 3, Header: http.Header{}, Request: req}
	var body []byte
	for len(raw) > 0 {
		h, k, err := h3.ParseFrameHeader(raw)
		if err != nil || uint64(len(raw)-k) < h.Length {
			return nil, fmt.Errorf("truncated frame in a response: % x", raw)
		}
		payload := raw[k : k+int(h.Length)]
		raw = raw[k+int(h.Length):]
		switch h.Type {
		case h3.FrameHeaders:
			fs, _, err := h3.DecodeFieldSection(nil, make([]byte, 0, 64<<10), payload, 64<<10)
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				if string(f.Name) == ":status" {
					resp.StatusCode, _ = strconv.Atoi(string(f.Value))
				} else if resp.StatusCode >= 200 {
					resp.Header.Add(string(f.Name), string(f.Value))
				}
			}
		case h3.FrameData:
			body = append(body, payload...)
			if tr.dataFrames != nil {
				tr.dataFrames.Add(1)
			}
		default:
			return nil, fmt.Errorf("frame type %#x in a response", h.Type)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
