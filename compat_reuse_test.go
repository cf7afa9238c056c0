package riptide

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// With CompatOptions.ReuseRequests the request, its Header map and the
// response Header map are the connection's, reused: what a request
// allocates is the copy of its head (new for each request, so that the
// strings made from it stay immutable) and what the handler allocates
// itself (Header().Set's value slice). The default door's figures are
// TestCompatAllocs'.
func TestCompatReuseAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	reuse := CompatOptions{ReuseRequests: true}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	})
	typed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello, World!")
	})
	for _, tc := range []struct {
		name string
		h    http.Handler
		max  float64
	}{
		// The head's copy.
		{"hello", hello, 1},
		// And Set's value slice.
		{"handler setting Content-Type", typed, 2},
	} {
		srv := &Server{Handler: FromHTTPWith(tc.h, reuse), Logger: slog.New(slog.DiscardHandler)}
		c := newAllocClient(t, serveTest(t, srv, testServeOptions{}).Addr, compatAllocRequest)
		n := testing.AllocsPerRun(2000, c.roundTrip)
		exact := mallocsPerRun(2000, c.roundTrip)
		t.Logf("ReuseRequests, %s: %v allocs/request (%.4f exactly)", tc.name, n, exact)
		if n > tc.max || exact > tc.max+0.01 {
			t.Errorf("ReuseRequests, %s: %v allocs per request (%.4f exactly), want at most %v", tc.name, n, exact, tc.max)
		}
	}
	t.Run("HTTP/2", func(t *testing.T) {
		ac := startH2AllocServer(t, &Server{Handler: FromHTTPWith(typed, reuse), Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}})
		h2 := testing.AllocsPerRun(2000, ac.roundTrip)
		t.Logf("ReuseRequests over HTTP/2, handler setting Content-Type: %v allocs/request", h2)
		// The head's copy and Set's value slice.
		if h2 > 2 {
			t.Errorf("ReuseRequests over HTTP/2, handler setting Content-Type: %v allocs per request, want at most 2", h2)
		}
	})
}

// compatReuseChildEnv names the handler TestCompatReuseRaceChild serves
// when the test binary is run again by TestCompatReuseRetainRaces.
const compatReuseChildEnv = "RIPTIDE_COMPAT_REUSE_CHILD"

// A handler that keeps the request (here: hands it to a goroutine that
// reads its URL and Header while or after ServeHTTP returns) breaks
// CompatOptions.ReuseRequests' contract; under -race it is reported as a
// data race. A handler whose goroutine is done before ServeHTTP returns
// runs clean, and so does the retaining handler on the default door. The
// child runs in a process of its own, since a race report
// fails the test that saw it.
func TestCompatReuseRetainRaces(t *testing.T) {
	t.Parallel()
	if !israce.Enabled {
		t.Skip("needs -race")
	}
	if testing.Short() {
		t.Skip("short")
	}
	for _, tc := range []struct {
		mode string
		race bool
	}{{"retain", true}, {"clean", false}, {"retain-default", false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCompatReuseRaceChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), compatReuseChildEnv+"="+tc.mode)
		out, err := cmd.CombinedOutput()
		raced := strings.Contains(string(out), "WARNING: DATA RACE")
		t.Logf("%s handler: exit %v, data race reported: %v", tc.mode, err, raced)
		if raced != tc.race || (err != nil) != tc.race {
			t.Errorf("%s handler: exit %v, data race reported %v, want %v; output:\n%s", tc.mode, err, raced, tc.race, out)
		}
	}
}

// TestCompatReuseRaceChild is TestCompatReuseRetainRaces' child: it
// serves two requests on one connection with ReuseRequests, through a
// handler whose goroutine reads the request unordered with ServeHTTP's
// return (retain, and retain-default without the option) or before it
// returns (clean).
func TestCompatReuseRaceChild(t *testing.T) {
	t.Parallel()
	mode := os.Getenv(compatReuseChildEnv)
	if mode == "" {
		t.Skip("run by TestCompatReuseRetainRaces")
	}
	kept := make(chan *http.Request, 1)
	read := make(chan string)
	readReq := func(r *http.Request) string {
		return r.URL.Path + " " + r.Header.Get("X-N") + " " + r.Method
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mode == "clean" {
			done := make(chan string)
			go func() { done <- readReq(r) }()
			io.WriteString(w, <-done)
			return
		}
		select {
		case kept <- r:
		default:
		}
		io.WriteString(w, "ok")
	})
	if mode != "clean" {
		// The goroutine reads the request with nothing ordering the read
		// after the serving goroutine's next use of it (the race
		// detector orders a socket write before a read of another
		// socket, so waiting for the response would hide the race).
		go func() { read <- readReq(<-kept) }()
	}
	// retain-default: the same handler on the default door, where
	// keeping the request is allowed (as with net/http).
	opts := CompatOptions{ReuseRequests: mode != "retain-default"}
	srv := &Server{Handler: FromHTTPWith(h, opts), Logger: slog.New(slog.DiscardHandler)}
	nc, err := net.Dial("tcp", serveTest(t, srv, testServeOptions{}).Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for i := range 2 {
		fmt.Fprintf(nc, "GET /r%d HTTP/1.1\r\nHost: x\r\nX-N: %d\r\n\r\n", i, i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("response %d: %q", i, body)
		if mode == "clean" && string(body) != fmt.Sprintf("/r%d %d GET", i, i) {
			t.Errorf("response %d: %q", i, body)
		}
		if mode != "clean" && i == 0 {
			t.Logf("kept request read after ServeHTTP returned: %q", <-read)
		}
	}
}

// parityFromHTTP is the door the parity tests (TestCompatParity,
// TestCompatParityH2) serve their handlers on: FromHTTP, or, with
// RIPTIDE_COMPAT_REUSE=1 in the environment, FromHTTPWith with
// ReuseRequests, to check that the option changes nothing else.
func parityFromHTTP(h http.Handler) Handler {
	return FromHTTPWith(h, CompatOptions{ReuseRequests: os.Getenv("RIPTIDE_COMPAT_REUSE") == "1"})
}

// With ReuseRequests, nothing of one request or response leaks into the
// next on the connection: each request sees only its own header fields,
// URL, body and trailers, and each response only the fields its handler
// set. The handler also waits on its Context and reads the body, which
// under -race checks the reuse against the disconnect watch and the body.
func TestCompatReuseNoLeak(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			t.Errorf("%s: context done while the handler runs", r.URL)
		default:
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("%s: body: %v", r.URL, err)
		}
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if n := r.URL.Query().Get("n"); n != "" {
			w.Header().Set("X-Only-"+n, n)
		}
		fmt.Fprintf(w, "%s %s %q %v %v", r.Method, r.URL.RequestURI(), body, keys, r.Trailer)
	})
	srv := &Server{Handler: FromHTTPWith(h, CompatOptions{ReuseRequests: true}), Logger: slog.New(slog.DiscardHandler)}
	nc, err := net.Dial("tcp", serveTest(t, srv, testServeOptions{}).Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	for i, tc := range []struct{ req, want, only string }{
		{"POST /a?n=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc",
			`POST /a?n=1 "abc" [Content-Length X-A X-B] map[]`, "X-Only-1"},
		{"GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
			`GET /b "" [] map[]`, ""},
		{"POST /c?n=3 HTTP/1.1\r\nHost: x\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-T: t\r\n\r\n",
			`POST /c?n=3 "hi" [] map[X-T:[t]]`, "X-Only-3"},
		{"GET /d HTTP/1.1\r\nHost: x\r\nX-C: 4\r\n\r\n",
			`GET /d "" [X-C] map[]`, ""},
	} {
		if _, err := io.WriteString(nc, tc.req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("request %d: handler saw %s, want %s", i, body, tc.want)
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "X-Only-") && k != tc.only {
				t.Errorf("request %d: response has %s (set for another request)", i, k)
			}
		}
		if tc.only != "" && resp.Header.Get(tc.only) == "" {
			t.Errorf("request %d: response lacks %s", i, tc.only)
		}
	}
}
