package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// startServe runs Serve for srv on a loopback UDP socket and returns its
// address and Serve's result channel.
func startServe(t testing.TB, srv *riptide.Server, opts *Options) (string, <-chan error) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- Serve(srv, pc, testTLS(t), opts)
	}()
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-finished:
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return pc.LocalAddr().String(), done
}

// nativeRoutes is a native handler: /hello, /echo (body and trailers
// back) and /proto (how the request came).
func nativeRoutes(h3 *atomic.Int32) riptide.Handler {
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		if x.IsHTTP3() {
			h3.Add(1)
		}
		switch string(x.Path()) {
		case "/hello":
			x.SetContentType("text/plain")
			x.WriteString("Hello, World!")
		case "/echo":
			body, err := io.ReadAll(x.Body())
			if err != nil {
				x.SetStatus(400)
				return
			}
			x.SetHeader("X-Method", string(x.Method()))
			for _, f := range x.Trailers() {
				x.SetTrailer(string(f.Name), string(f.Value))
			}
			x.Write(body)
		case "/info":
			x.WriteInformational(103)
			x.Flush()
			x.WriteString("streamed")
		default:
			x.SetStatus(404)
		}
	})
}

// compatRoutes is the same as a net/http handler through FromHTTP.
func compatRoutes(h3 *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 3 && r.TLS != nil && r.TLS.NegotiatedProtocol == "h3" {
			h3.Add(1)
		}
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "Hello, World!")
		case "/echo":
			body, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(400)
				return
			}
			w.Header().Set("X-Method", r.Method)
			for k, vs := range r.Trailer {
				w.Header().Set(http.TrailerPrefix+k, vs[0])
			}
			w.Write(body)
		case "/info":
			w.WriteHeader(103)
			w.(http.Flusher).Flush()
			io.WriteString(w, "streamed")
		default:
			w.WriteHeader(404)
		}
	})
}

// TestServe serves both doors over real loopback QUIC with quic-go's
// client: GET, a 200 KB POST echoed with trailers, a flushed response
// after a 103, 50 concurrent streams; each request is seen by the handler
// as HTTP/3, and Stats counts the streams and the connection.
func TestServe(t *testing.T) {
	for _, door := range []string{"native", "compat"} {
		t.Run(door, func(t *testing.T) {
			var h3 atomic.Int32
			srv := &riptide.Server{Handler: nativeRoutes(&h3)}
			if door == "compat" {
				srv.Handler = riptide.FromHTTP(compatRoutes(&h3))
			}
			addr, _ := startServe(t, srv, nil)
			cl := h3Client(t)
			base := "https://" + addr
			requests := 0

			resp, err := cl.Get(base + "/hello")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			requests++
			if resp.ProtoMajor != 3 || resp.StatusCode != 200 || string(body) != "Hello, World!" ||
				resp.Header.Get("Content-Type") != "text/plain" || resp.ContentLength != 13 || resp.Header.Get("Date") == "" {
				t.Fatalf("GET: proto %d status %d body %q header %v length %d", resp.ProtoMajor, resp.StatusCode, body, resp.Header, resp.ContentLength)
			}

			big := bytes.Repeat([]byte("0123456789"), 20000)
			req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(bytes.NewReader(big)))
			req.Trailer = http.Header{"X-Sum": {"abc"}}
			resp, err = cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			requests++
			if err != nil || !bytes.Equal(body, big) || resp.Header.Get("X-Method") != "POST" || resp.Trailer.Get("X-Sum") != "abc" {
				t.Fatalf("POST echo: err %v, %d bytes (want %d), header %v trailer %v", err, len(body), len(big), resp.Header, resp.Trailer)
			}

			resp, err = cl.Get(base + "/info")
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			requests++
			if resp.StatusCode != 200 || string(body) != "streamed" {
				t.Fatalf("streamed: status %d body %q", resp.StatusCode, body)
			}

			var wg sync.WaitGroup
			var failed atomic.Int32
			for range 50 {
				wg.Go(func() {
					resp, err := cl.Post(base+"/echo", "text/plain", strings.NewReader("ping"))
					if err != nil {
						failed.Add(1)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(b) != "ping" {
						failed.Add(1)
					}
				})
			}
			wg.Wait()
			requests += 50
			if failed.Load() != 0 {
				t.Fatalf("%d of 50 concurrent requests failed", failed.Load())
			}
			if got := int(h3.Load()); got != requests {
				t.Errorf("handler saw %d requests over HTTP/3, want %d", got, requests)
			}
			var st riptide.Stats
			srv.Stats(&st)
			if st.H3Streams != uint64(requests) || st.Requests != uint64(requests) || st.Accepted != 1 || st.ConnsActive != 1 {
				t.Errorf("stats: H3Streams %d Requests %d Accepted %d ConnsActive %d; want %d, %d, 1, 1",
					st.H3Streams, st.Requests, st.Accepted, st.ConnsActive, requests, requests)
			}
			// The 200 KB echo went both ways, in DATA frames.
			if st.BytesIn < uint64(len(big)) || st.BytesOut < uint64(len(big)) || st.BytesIn > 2*uint64(len(big)) {
				t.Errorf("stats: BytesIn %d BytesOut %d, want each at least %d (and in under twice that)", st.BytesIn, st.BytesOut, len(big))
			}
		})
	}
}

// TestServeShutdown: Shutdown lets a request in flight finish, sends
// GOAWAY, closes the connection and makes Serve return ErrServerClosed;
// ConnState saw the connection open and close.
func TestServeShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	var states []riptide.ConnState
	var mu sync.Mutex
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
			if string(x.Path()) == "/slow" {
				started <- struct{}{}
				<-release
			}
			x.WriteString("done")
		}),
		ConnState: func(nc net.Conn, st riptide.ConnState) {
			mu.Lock()
			states = append(states, st)
			mu.Unlock()
		},
	}
	addr, served := startServe(t, srv, nil)
	// Registered after startServe's cleanup, so it runs first: a failure
	// before the release below ends the test instead of leaving Close
	// waiting for the blocked handler.
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	res := getAsync(h3Client(t), "https://"+addr+"/slow")
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	// Shutdown waits for the handler.
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a handler running", err)
	case <-time.After(200 * time.Millisecond):
	}
	finishShutdown(t, unblock, res, shut, served)
	mu.Lock()
	defer mu.Unlock()
	if len(states) != 3 || states[0] != riptide.StateNew || states[1] != riptide.StateActive || states[2] != riptide.StateClosed {
		t.Errorf("ConnState calls %v, want [new active closed]", states)
	}
}

// TestServeAltSvc: while Serve runs, the Server's HTTP/1.1 responses
// advertise its UDP port; after Shutdown's GOAWAY they do not.
func TestServeAltSvc(t *testing.T) {
	// Alt-Svc goes on the TLS port's responses (HTTP/1.1 and h2), never
	// on cleartext HTTP/1.1 or h2c: a browser takes no alternative from a
	// cleartext origin, and the cleartext port is often a redirect to TLS
	// (it was sent on both).
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") }), HTTP2: &riptide.HTTP2Config{H2C: true}}
	srv.TLSConfig = testTLS(t)
	srv.TLSConfig.NextProtos = nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	go srv.ServeTLS(tln, "", "")
	addr, _ := startServe(t, srv, nil)
	_, port, _ := net.SplitHostPort(addr)
	get := func(url string, h2 bool) *http.Response {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Protocols: new(http.Protocols)}
		defer tr.CloseIdleConnections()
		tr.Protocols.SetHTTP1(!h2)
		tr.Protocols.SetHTTP2(h2)
		tr.Protocols.SetUnencryptedHTTP2(h2)
		resp, err := (&http.Client{Transport: tr}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
			t.Fatalf("GET %s over %s", url, resp.Proto)
		}
		return resp
	}
	tlsURL := "https://" + tln.Addr().String() + "/"
	var resp *http.Response
	for range 1000 {
		// Serve registers its listener on its own goroutine.
		if resp = get(tlsURL, false); resp.Header.Get("Alt-Svc") != "" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	want := `h3=":` + port + `"; ma=86400`
	for _, h2 := range []bool{false, true} {
		if got := get(tlsURL, h2).Header.Get("Alt-Svc"); got != want {
			t.Errorf("TLS, HTTP/2 %v: Alt-Svc %q, want %q", h2, got, want)
		}
		if got := get("http://"+ln.Addr().String()+"/", h2).Header.Get("Alt-Svc"); got != "" {
			t.Errorf("cleartext, HTTP/2 %v: Alt-Svc %q, want none", h2, got)
		}
	}
}

// servedSoon returns a client whose GET of addr was served, trying a new
// client each second up to ten times: a connection slot freed by a
// closed connection is given back once the server has seen the close.
func servedSoon(t *testing.T, addr string) *http.Client {
	t.Helper()
	for i := 0; ; i++ {
		c := h3Client(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/", nil)
		resp, err := c.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			return c
		}
		if i == 10 {
			t.Fatalf("no connection served: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeLimits: MaxConns refuses a second connection (counted in
// Stats.Refused); MaxRequestsPerConn sends GOAWAY after the limit, so the
// client's next request opens a new connection.
func TestServeLimits(t *testing.T) {
	// With Allow0RTT quic-go hands the connection over before its
	// handshake completes: it takes its slot then all the same.
	for _, opts := range []*Options{nil, {Allow0RTT: true}} {
		t.Run(fmt.Sprintf("MaxConns/Allow0RTT=%v", opts != nil), func(t *testing.T) { testMaxConns(t, opts) })
	}
	t.Run("MaxRequestsPerConn", func(t *testing.T) {
		// A raw QUIC client, so that the test (not an HTTP/3 client's
		// reaction to GOAWAY, which quic-go's races with its next
		// request) decides when the next request goes elsewhere: each
		// connection's requests, the GOAWAY read from the server's
		// control stream, then the next connection.
		srv := &riptide.Server{MaxRequestsPerConn: 2, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") })}
		addr, _ := startServe(t, srv, nil)
		served := 0
		for conn, want := range []int{2, 2, 1} {
			c := dialRaw(t, addr)
			goaway := watchGoaway(c.qc)
			for range want {
				if got := statusOf(t, c.do(t)); got != "200" {
					t.Fatalf("connection %d, request %d: status %s", conn, served, got)
				}
				served++
			}
			if want < 2 {
				break // below the limit: no GOAWAY
			}
			// The last allowed request (stream 4) was answered; the
			// GOAWAY's ID is the first stream the server will not serve.
			select {
			case id, ok := <-goaway:
				if !ok || id != 8 {
					t.Fatalf("connection %d: GOAWAY %d (received %v), want 8 after stream 4", conn, id, ok)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("connection %d: no GOAWAY after %d requests", conn, want)
			}
			c.qc.CloseWithError(0, "") // as a client that saw GOAWAY may
		}
		var st riptide.Stats
		srv.Stats(&st)
		if st.Accepted != 3 || st.Requests != 5 {
			t.Errorf("Accepted %d Requests %d, want 3 connections for 5 requests", st.Accepted, st.Requests)
		}
	})
}

// testMaxConns: MaxConns 1 refuses a second connection (counted in
// Stats.Refused), a failed handshake and a closed connection give their
// slot back.
func testMaxConns(t *testing.T, opts *Options) {
	srv := &riptide.Server{MaxConns: 1, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") })}
	addr, _ := startServe(t, srv, opts)
	// A connection whose handshake fails gives its slot back.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if qc, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"not-h3"}}, nil); err == nil {
		qc.CloseWithError(0, "")
		t.Fatal("handshake with ALPN not-h3 succeeded")
	}
	c1 := servedSoon(t, addr)
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/", nil)
	if resp, err := h3Client(t).Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a second connection was served beyond MaxConns 1")
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.Refused < 1 || st.Accepted != 1 {
		t.Errorf("Refused %d Accepted %d, want ≥ 1 and 1", st.Refused, st.Accepted)
	}
	// The first connection's end gives its slot back.
	c1.Transport.(*qhttp3.Transport).Close()
	servedSoon(t, addr)
}

// watchGoaway reads the server's control stream on qc and sends the ID of
// its first GOAWAY frame; the channel is closed without one if the
// connection ends first.
func watchGoaway(qc *quic.Conn) <-chan uint64 {
	ch := make(chan uint64, 1)
	go func() {
		defer close(ch)
		for {
			u, err := qc.AcceptUniStream(context.Background())
			if err != nil {
				return
			}
			if id, ok := readGoaway(u); ok {
				ch <- id
				return
			}
		}
	}()
	return ch
}

// readGoaway reads a unidirectional stream and reports the ID of the first
// GOAWAY frame on it, if it is a control stream that carries one.
func readGoaway(r io.Reader) (uint64, bool) {
	var buf []byte
	tmp := make([]byte, 512)
	typed := false
	for {
		n, err := r.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if !typed {
			if v, k, perr := h3.ParseVarint(buf); perr == nil {
				if v != 0x00 { // not the control stream
					return 0, false
				}
				buf, typed = buf[k:], true
			}
		}
		for typed {
			h, k, perr := h3.ParseFrameHeader(buf)
			if perr != nil || uint64(len(buf)-k) < h.Length {
				break
			}
			if h.Type == h3.FrameGoaway {
				id, err := h3.ParseID(buf[k : k+int(h.Length)])
				return id, err == nil
			}
			buf = buf[k+int(h.Length):]
		}
		if err != nil {
			return 0, false
		}
	}
}

// TestServeDisconnect: a client that abandons its request (the stream is
// reset) ends the handler's Done (native) or the request's Context
// (compat), while the handler waits for the body.
func TestServeDisconnect(t *testing.T) {
	for _, door := range []string{"native", "compat"} {
		t.Run(door, func(t *testing.T) {
			started := make(chan struct{}, 1)
			gone := make(chan struct{}, 1)
			srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
				started <- struct{}{}
				<-x.Done()
				gone <- struct{}{}
			})}
			if door == "compat" {
				srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					started <- struct{}{}
					<-r.Context().Done()
					gone <- struct{}{}
				}))
			}
			addr, _ := startServe(t, srv, nil)
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			defer pw.Close()
			req, _ := http.NewRequestWithContext(ctx, "POST", "https://"+addr+"/", pr)
			go func() {
				if resp, err := h3Client(t).Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			pw.Write([]byte("part of a body"))
			<-started
			cancel()
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler was not told the client left")
			}
		})
	}
}

// TestServeBodyClose: a compat handler that closes the request body while
// another goroutine waits in Read (grpc-go does) unblocks that Read, and
// its response still goes out whole.
func TestServeBodyClose(t *testing.T) {
	srv := &riptide.Server{Handler: riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		readErr := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, r.Body)
			readErr <- err
		}()
		time.Sleep(50 * time.Millisecond) // let the reader block
		r.Body.Close()
		select {
		case err := <-readErr:
			io.WriteString(w, "read ended: "+errString(err))
		case <-time.After(10 * time.Second):
			io.WriteString(w, "read still blocked")
		}
	}))}
	addr, _ := startServe(t, srv, nil)
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", "https://"+addr+"/", pr)
	go pw.Write([]byte("the start of a body that never ends"))
	resp, err := h3Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(string(body), "read ended") {
		t.Fatalf("status %d body %q err %v, want the read ended and a whole response", resp.StatusCode, body, err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestServePanic: a handler that panics after its head went out has its
// stream reset, so the client does not take the response as complete; a
// panic before it is answered 500. Hijack is refused on a stream.
func TestServePanic(t *testing.T) {
	var hijackErr atomic.Value
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/late":
			x.SetContentLength(100)
			x.WriteString("part")
			x.Flush()
			panic("late")
		case "/early":
			panic("early")
		case "/hijack":
			_, _, err := x.Hijack()
			hijackErr.Store(errString(err))
		}
	})}
	srv.Logger = discardLogger()
	addr, _ := startServe(t, srv, nil)
	cl := h3Client(t)
	resp, err := cl.Get("https://" + addr + "/late")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Error("a response cut by a panic read as complete")
	}
	resp, err = cl.Get("https://" + addr + "/early")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("panic before the head: status %d, want 500", resp.StatusCode)
	}
	resp, err = cl.Get("https://" + addr + "/hijack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, _ := hijackErr.Load().(string); !strings.Contains(got, "HTTP/3") {
		t.Errorf("Hijack on an HTTP/3 stream: %q, want an error naming HTTP/3", got)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestServeDrain: Drain sends the open HTTP/3 connections GOAWAY and they
// close (ConnState closed, no connection left in Stats), while Serve goes
// on serving new connections.
func TestServeDrain(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") }),
		ConnState: func(_ net.Conn, st riptide.ConnState) {
			if st == riptide.StateClosed {
				closed <- struct{}{}
			}
		},
	}
	addr, _ := startServe(t, srv, nil)
	get := func() {
		t.Helper()
		resp, err := h3Client(t).Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get()
	srv.Drain()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection was not closed after Drain")
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.ConnsActive != 0 {
		t.Fatalf("%d connections open after Drain closed the only one", st.ConnsActive)
	}
	get() // a new connection is still served while draining
	// The server counts a request once its response has ended, after the
	// client may have read it: wait for the count, bounded.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if srv.Stats(&st); st.Requests >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if st.Accepted != 2 || st.Requests != 2 {
		t.Errorf("Accepted %d Requests %d, want 2 and 2", st.Accepted, st.Requests)
	}
}

// retryCounter is a PacketConn that counts the Retry packets the server
// sends (long header, type Retry: the first byte's top four bits set).
type retryCounter struct {
	net.PacketConn
	retries atomic.Int32
}

func (c *retryCounter) WriteTo(p []byte, addr net.Addr) (int, error) {
	if len(p) > 0 && p[0]&0xf0 == 0xf0 {
		c.retries.Add(1)
	}
	return c.PacketConn.WriteTo(p, addr)
}

// TestServeRetry: with RetryThreshold negative every connection proves its
// address with a Retry first, and is then served; by default (threshold
// 64) one connection gets no Retry.
func TestServeRetry(t *testing.T) {
	for _, c := range []struct {
		threshold int
		retry     bool
	}{{-1, true}, {0, false}} {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rc := &retryCounter{PacketConn: pc}
		srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") })}
		done := make(chan error, 1)
		go func() { done <- Serve(srv, rc, testTLS(t), &Options{RetryThreshold: c.threshold}) }()
		resp, err := h3Client(t).Get("https://" + pc.LocalAddr().String() + "/")
		if err != nil {
			t.Fatalf("threshold %d: %v", c.threshold, err)
		}
		resp.Body.Close()
		if got := rc.retries.Load() > 0; got != c.retry {
			t.Errorf("threshold %d: %d Retry packets sent, want a Retry: %v", c.threshold, rc.retries.Load(), c.retry)
		}
		srv.Close()
		<-done
		pc.Close()
	}
}

// TestServeMaxConnAge: a connection older than MaxConnAge is sent GOAWAY
// and closes, idle or not.
func TestServeMaxConnAge(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := &riptide.Server{
		MaxConnAge: 100 * time.Millisecond,
		Handler:    riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") }),
		ConnState: func(_ net.Conn, st riptide.ConnState) {
			if st == riptide.StateClosed {
				closed <- struct{}{}
			}
		},
	}
	addr, _ := startServe(t, srv, nil)
	resp, err := h3Client(t).Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection past MaxConnAge was not closed")
	}
}
