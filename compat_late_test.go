package riptide

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/testcert"
)

// lateApp is a net/http handler whose /late requests leave a goroutine
// that uses the ResponseWriter (and the request) after ServeHTTP
// returned, and whose /next requests, the next ones of the same
// connection, release that goroutine, write and flush part of their own
// response meanwhile, and wait for it before they end: every late call is
// made while the next response is being produced, on the connection (and,
// on the event loop, the worker) that served the late request. The late calls' bytes are marked "LATE";
// no response may hold them.
type lateApp struct {
	mu     sync.Mutex
	parked map[string]chan lateJob // by RemoteAddr: one connection's
	file   string                  // a file ReadFrom would send with sendfile
	fails  []string                // what the late calls got that they must not
}

// lateJob is a goroutine left by /late: closing run starts its late
// calls; done is closed when they have returned.
type lateJob struct{ run, done chan struct{} }

func (a *lateApp) queue(remote string) chan lateJob {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.parked == nil {
		a.parked = make(map[string]chan lateJob)
	}
	q := a.parked[remote]
	if q == nil {
		q = make(chan lateJob, 64)
		a.parked[remote] = q
	}
	return q
}

func (a *lateApp) fail(format string, args ...any) {
	a.mu.Lock()
	a.fails = append(a.fails, fmt.Sprintf(format, args...))
	a.mu.Unlock()
}

func (a *lateApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/late":
		job := lateJob{run: make(chan struct{}), done: make(chan struct{})}
		go func() {
			defer close(job.done)
			<-job.run
			a.lateCalls(w, r)
		}()
		a.queue(r.RemoteAddr) <- job
	case "/next":
		w.Header().Set("X-Next", "1")
		select {
		case job := <-a.queue(r.RemoteAddr):
			// The late calls run while this response is written (under
			// -race: nothing of ours is shared with them unsynchronised).
			close(job.run)
			io.WriteString(w, "next-")
			w.(http.Flusher).Flush()
			select {
			case <-job.done:
			case <-time.After(20 * time.Second):
				a.fail("the late calls did not return")
			}
		case <-time.After(20 * time.Second):
			a.fail("no late goroutine parked for %s", r.RemoteAddr)
		}
		io.WriteString(w, "body")
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// lateCalls makes every call a handler can make on what it was given,
// after ServeHTTP returned: each must fail or do nothing.
func (a *lateApp) lateCalls(w http.ResponseWriter, r *http.Request) {
	check := func(what string, err error) {
		if !errors.Is(err, ErrHandlerReturned) {
			a.fail("late %s: error %v, want ErrHandlerReturned", what, err)
		}
	}
	w.Header().Set("X-Late", "LATE-HEADER")
	w.Header().Set("Content-Length", "1")
	w.WriteHeader(299)
	n, err := w.Write([]byte("LATE-WRITE"))
	if n != 0 {
		a.fail("late Write wrote %d bytes", n)
	}
	check("Write", err)
	_, err = io.WriteString(w, "LATE-STRING")
	check("WriteString", err)
	_, err = w.(io.ReaderFrom).ReadFrom(strings.NewReader("LATE-READFROM"))
	check("ReadFrom", err)
	if f, err := os.Open(a.file); err != nil {
		a.fail("%v", err)
	} else {
		_, err = w.(io.ReaderFrom).ReadFrom(f)
		check("ReadFrom(*os.File)", err)
		f.Close()
	}
	w.(http.Flusher).Flush()
	rc := http.NewResponseController(w)
	check("ResponseController.Flush", rc.Flush())
	check("SetWriteDeadline", rc.SetWriteDeadline(time.Now().Add(-time.Second)))
	check("SetReadDeadline", rc.SetReadDeadline(time.Now().Add(-time.Second)))
	if _, _, err := rc.Hijack(); !errors.Is(err, ErrHandlerReturned) && !errors.Is(err, http.ErrNotSupported) {
		a.fail("late Hijack: error %v", err)
	}
	if _, err := r.Body.Read(make([]byte, 8)); err == nil || r.ContentLength > 0 && !errors.Is(err, http.ErrBodyReadAfterClose) {
		a.fail("late Body.Read: error %v", err)
	}
	if r.Context().Err() == nil {
		a.fail("late Context not cancelled")
	}
}

// check fails t with what the late calls got, and reports the response
// if it holds anything of a late call or is not the next response whole.
func (a *lateApp) check(t *testing.T, what string, res *http.Response, body []byte) {
	t.Helper()
	a.mu.Lock()
	fails := a.fails
	a.fails = nil
	a.mu.Unlock()
	for _, f := range fails {
		t.Errorf("%s: %s", what, f)
	}
	if res.StatusCode != http.StatusOK || string(body) != "next-body" || res.Header.Get("X-Next") != "1" ||
		res.Header.Get("X-Late") != "" || strings.Contains(string(body), "LATE") {
		t.Errorf("%s: the next response is status %d, header %v, body %q; want 200, X-Next and next-body alone",
			what, res.StatusCode, res.Header, body)
	}
}

// lateEngines are the engines the late-write test runs on (TLS always runs
// on the goroutine engine).
var lateEngines = []Engine{EngineGoroutine, EngineEventLoop, EngineOnLoop}

// TestCompatLateWrite: a ResponseWriter used after ServeHTTP returned
// (from a goroutine the handler left behind) gets ErrHandlerReturned and
// sends nothing, on every protocol and engine; the next response on the
// connection (the next request of an HTTP/1.1 connection, kept alive or
// pipelined, or the next stream of an HTTP/2 connection) is whole and holds
// none of the late bytes. Several connections at once, so that on the
// event loop the late write meets another connection's request on the
// worker too. HTTP/3 is TestCompatLateWriteH3 in http3/.
func TestCompatLateWrite(t *testing.T) {
	t.Parallel()
	const conns, rounds = 3, 5
	for _, tlsOn := range []bool{false, true} {
		for _, e := range lateEngines {
			if tlsOn && e != EngineGoroutine {
				continue
			}
			name := e.String()
			if tlsOn {
				name = "tls"
			}
			t.Run(name, func(t *testing.T) {
				app := &lateApp{file: filepath.Join(t.TempDir(), "late")}
				if err := os.WriteFile(app.file, []byte("LATE-FILE"), 0o644); err != nil {
					t.Fatal(err)
				}
				srv := &Server{Handler: FromHTTP(app), Engine: e, Logger: slog.New(slog.DiscardHandler),
					HTTP2: &HTTP2Config{H2C: true}}
				if tlsOn {
					srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{lateCert(t)}}
				}
				addr := serveTest(t, srv, testServeOptions{TLS: tlsOn}).Addr
				for _, pipelined := range []bool{false, true} {
					mode := "keep-alive"
					if pipelined {
						mode = "pipelined"
					}
					t.Run(mode, func(t *testing.T) {
						var wg sync.WaitGroup
						for range conns {
							wg.Go(func() { lateH1(t, app, addr, tlsOn, pipelined, rounds) })
						}
						wg.Wait()
					})
				}
				t.Run("h2", func(t *testing.T) {
					c := lateH2Client(t, tlsOn)
					scheme := "http"
					if tlsOn {
						scheme = "https"
					}
					var wg sync.WaitGroup
					for range conns {
						wg.Go(func() {
							for i := range rounds {
								what := fmt.Sprintf("h2 round %d", i)
								if _, body := lateGet(t, c, scheme+"://"+addr+"/late"); body == nil || len(body) != 0 {
									t.Errorf("%s: /late answered %q, want an empty body", what, body)
									return
								}
								res, body := lateGet(t, c, scheme+"://"+addr+"/next")
								if res == nil {
									return
								}
								if res.ProtoMajor != 2 {
									t.Errorf("%s: answered over %s", what, res.Proto)
								}
								app.check(t, what, res, body)
							}
						})
					}
					wg.Wait()
				})
			})
		}
	}
}

// lateH1 runs rounds of /late then /next on one HTTP/1.1 connection to
// addr: each request after the previous response, or each pair sent in
// one write (pipelined).
func lateH1(t *testing.T, app *lateApp, addr string, tlsOn, pipelined bool, rounds int) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Error(err)
		return
	}
	if tlsOn {
		nc = tls.Client(nc, lateClientTLS(t, "http/1.1"))
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(nc)
	// /late has a body it leaves unread, for the late Body.Read.
	const late = "POST /late HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody"
	const next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
	read := func(what string) (*http.Response, []byte) {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return nil, nil
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Errorf("%s: body: %v", what, err)
			return nil, nil
		}
		return res, body
	}
	for i := range rounds {
		what := fmt.Sprintf("round %d", i)
		if pipelined {
			_, err = io.WriteString(nc, late+next)
		} else {
			_, err = io.WriteString(nc, late)
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		res, body := read(what + " /late")
		if res == nil {
			return
		}
		if res.StatusCode != http.StatusOK || len(body) != 0 {
			t.Errorf("%s: /late answered %d %q, want 200 and no body", what, res.StatusCode, body)
		}
		if !pipelined {
			if _, err := io.WriteString(nc, next); err != nil {
				t.Errorf("%s: %v", what, err)
				return
			}
		}
		res, body = read(what + " /next")
		if res == nil {
			return
		}
		app.check(t, what, res, body)
	}
}

// lateH2Client is a client that speaks only HTTP/2 (h2c prior knowledge
// or TLS with ALPN h2) to the test server.
func lateH2Client(t *testing.T, tlsOn bool) *http.Client {
	tr := &http.Transport{}
	var p http.Protocols
	if tlsOn {
		p.SetHTTP2(true)
		tr.TLSClientConfig = lateClientTLS(t, "h2")
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// lateGet GETs url with c and returns the response and its body; nil
// after reporting an error.
func lateGet(t *testing.T, c *http.Client, url string) (*http.Response, []byte) {
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	res, err := c.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return nil, nil
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Errorf("GET %s: body: %v", url, err)
		return nil, nil
	}
	return res, body
}

// lateCert is the test certificate the TLS server serves.
func lateCert(t *testing.T) tls.Certificate {
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// lateClientTLS trusts lateCert and offers the ALPN protocol proto.
func lateClientTLS(t *testing.T, proto string) *tls.Config {
	return &tls.Config{RootCAs: testcert.Pool(lateCert(t)), ServerName: "127.0.0.1", NextProtos: []string{proto}}
}

// TestCompatSendfileOutlivesReturn: a goroutine the handler left copying a
// file into the response with ReadFrom (sendfile: no lock held while it
// sends) when ServeHTTP returned finishes that response, whole, before the
// connection serves its next request; the engine used to end the request
// at once, under the copy: the response was cut short and the connection
// closed under the bytes still being sent. The file is a pipe, so that the
// copy is still sending when the handler returns: the test feeds its second
// half once the server waits for it (or, on the old code, has moved on).
func TestCompatSendfileOutlivesReturn(t *testing.T) {
	half := strings.Repeat("a", 512)
	for _, e := range lateEngines {
		t.Run(e.String(), func(t *testing.T) {
			pipes := make(chan *os.File, 1)
			release, after := make(chan struct{}), make(chan struct{}, 1)
			copied := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/after" {
					after <- struct{}{}
					io.WriteString(w, "after")
					return
				}
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Error(err)
					return
				}
				io.WriteString(pw, half)
				pipes <- pw
				w.Header().Set("Content-Length", "1024")
				go func() {
					_, err := w.(io.ReaderFrom).ReadFrom(pr)
					pr.Close()
					copied <- err
				}()
				<-release // the first half has reached the client
			})
			srv := &Server{Handler: FromHTTP(h), Engine: e, Logger: slog.New(slog.DiscardHandler)}
			nc, err := net.Dial("tcp", serveTest(t, srv, testServeOptions{}).Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(nc, "GET /file HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n")
			firstHalf, read := make(chan struct{}), make(chan string, 1)
			go func() {
				br := bufio.NewReader(nc)
				var got strings.Builder
				for i, path := range []string{"/file", "/after"} {
					res, err := http.ReadResponse(br, nil)
					if err != nil {
						read <- fmt.Sprintf("%s%s: %v", got.String(), path, err)
						return
					}
					if i == 0 {
						b := make([]byte, 512)
						_, err := io.ReadFull(res.Body, b)
						close(firstHalf)
						if err != nil {
							read <- fmt.Sprintf("%s: first half: %v", path, err)
							return
						}
						got.Write(b)
					}
					b, err := io.ReadAll(res.Body)
					got.Write(b)
					if err != nil {
						read <- fmt.Sprintf("%s%s: %v", got.String(), path, err)
						return
					}
					got.WriteString("|")
				}
				read <- got.String()
			}()
			pw := <-pipes
			<-firstHalf
			close(release)
			// Feed the second half once the server waits for it
			// (compatWriter.waitSend), or has served /after, or the
			// client's read ended.
			var result string
			buf := make([]byte, 1<<20)
			for fed := false; result == ""; {
				select {
				case result = <-read:
				case <-after:
					fed = true
				default:
					fed = fed || strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*compatWriter).waitSend")
					if !fed {
						time.Sleep(time.Millisecond)
					}
				}
				if fed && pw != nil {
					io.WriteString(pw, half)
					pw.Close()
					pw = nil
				}
				if result != "" && pw != nil {
					pw.Close()
					pw = nil
				}
			}
			if want := half + half + "|after|"; result != want {
				t.Errorf("the client read %q, want the file's 1024 bytes, then \"after\"", result)
			}
			if err := <-copied; err != nil {
				t.Errorf("ReadFrom: %v", err)
			}
		})
	}
}

// TestCompatWritesOverlappingReturn: a goroutine that keeps writing (Write,
// ReadFrom through io.Copy, Flush) while ServeHTTP returns is ordered with
// the return by the request's lock: under -race nothing is reported, every
// call before the end lands in this response, the first after it gets
// ErrHandlerReturned, and the next response on the connection (HTTP/1.1,
// h2c) is clean, on every engine.
func TestCompatWritesOverlappingReturn(t *testing.T) {
	t.Parallel()
	for _, e := range lateEngines {
		t.Run(e.String(), func(t *testing.T) {
			ended := make(chan error, 64)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/next" {
					io.WriteString(w, "next-body")
					return
				}
				go func() {
					for i := 0; ; i++ {
						var err error
						switch i % 3 {
						case 0:
							_, err = io.WriteString(w, "LATE")
						case 1:
							_, err = io.Copy(w, strings.NewReader("LATE"))
						default:
							err = http.NewResponseController(w).Flush()
						}
						if err != nil {
							ended <- err
							return
						}
					}
				}()
			})
			srv := &Server{Handler: FromHTTP(h), Engine: e, Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}}
			addr := serveTest(t, srv, testServeOptions{}).Addr
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(nc)
			c := lateH2Client(t, false)
			for i := range 10 {
				io.WriteString(nc, "GET /spin HTTP/1.1\r\nHost: x\r\n\r\n")
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(res.Body)
				if err != nil || strings.ReplaceAll(string(body), "LATE", "") != "" {
					t.Fatalf("round %d: /spin body %q, %v: want LATE repeated", i, body, err)
				}
				if _, body := lateGet(t, c, "http://"+addr+"/spin"); body == nil {
					return
				}
				for range 2 {
					if err := <-ended; !errors.Is(err, ErrHandlerReturned) {
						t.Errorf("round %d: the writing goroutine stopped on %v, want ErrHandlerReturned", i, err)
					}
				}
				io.WriteString(nc, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
				if res, err = http.ReadResponse(br, nil); err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(res.Body)
				_, body2 := lateGet(t, c, "http://"+addr+"/next")
				if string(body) != "next-body" || string(body2) != "next-body" {
					t.Errorf("round %d: the next responses are %q (HTTP/1.1) and %q (h2c), want next-body", i, body, body2)
				}
			}
		})
	}
}
