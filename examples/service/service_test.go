package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/riptide-http/riptide"
)

// setup is one way of serving the service: a door, and for riptide's
// doors an engine.
type setup struct {
	door   string
	engine riptide.Engine
}

func (s setup) String() string {
	if s.door == "nethttp" {
		return s.door
	}
	return s.door + "/" + s.engine.String()
}

// setups are the doors, each riptide door on both of its engines.
var setups = []setup{
	{"native", riptide.EngineEventLoop},
	{"native", riptide.EngineGoroutine},
	{"native", riptide.EngineOnLoop},
	{"compat", riptide.EngineEventLoop},
	{"compat", riptide.EngineGoroutine},
	{"nethttp", riptide.EngineAuto},
}

const testOrigin = "https://app.example"

// running is a service serving on a loopback port.
type running struct {
	url    string
	svc    *service
	served chan error // Serve's result

	stopOnce          sync.Once
	stopErr, serveErr error // Shutdown's and Serve's results
	logs              *syncWriter
}

// syncWriter is a log destination the test reads while handlers write.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// start serves a fresh service (one note in the store) for s; the test's
// cleanup shuts it down if the test did not.
func start(t *testing.T, s setup) *running {
	t.Helper()
	logs := new(syncWriter)
	log := slog.New(slog.NewTextHandler(logs, nil))
	svc, err := newService(config{
		door:    s.door,
		engine:  s.engine,
		static:  "public",
		users:   map[string]string{"admin": "secret"},
		origins: []string{testOrigin},
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &running{url: "http://" + ln.Addr().String(), svc: svc, served: make(chan error, 1), logs: logs}
	go func() { r.served <- svc.serve(ln) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop shuts the service down (once) and returns Shutdown's error; after
// it every handler has returned. The deadline is only there so that a
// handler that does not end fails the test (context.DeadlineExceeded)
// rather than hang it: nothing here should take more than milliseconds.
func (r *running) stop() error {
	r.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r.stopErr = r.svc.shutdown(ctx)
		r.serveErr = <-r.served
	})
	return r.stopErr
}

// client never compresses on its own (the tests ask for encodings
// explicitly) and keeps no connection between tests.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true}}
}

// call is one request of TestAPI and what its response must be.
type call struct {
	name    string
	method  string
	path    string
	header  map[string]string
	body    string
	status  int
	want    map[string]string // response header fields (exact)
	absent  []string          // response header fields that must be missing
	json    string            // JSON object whose fields the body must have (equal values)
	jsonLen int               // for an array body: its length (-1: not an array)
}

const (
	jsonCT = "application/json"
	auth   = "Basic YWRtaW46c2VjcmV0" // admin:secret
)

// TestAPI drives the service over loopback on every door and engine with
// the same table: JSON in and out, the errors in JSON, CORS, Basic auth
// on /admin and the prefix it owns, the static page.
func TestAPI(t *testing.T) {
	calls := []call{
		{name: "list", method: "GET", path: "/api/notes", status: 200,
			want: map[string]string{"Content-Type": jsonCT}, jsonLen: 1},
		{name: "one note", method: "GET", path: "/api/notes/1", status: 200,
			json: `{"id":1,"title":"welcome"}`},
		{name: "no such note", method: "GET", path: "/api/notes/99", status: 404,
			want: map[string]string{"Content-Type": jsonCT}, json: `{"error":"note not found","status":404}`},
		{name: "bad id", method: "GET", path: "/api/notes/x", status: 400,
			json: `{"error":"id must be a positive integer","status":400}`},
		{name: "unknown path under /api", method: "GET", path: "/api/nope", status: 404,
			want: map[string]string{"Content-Type": jsonCT}, json: `{"status":404}`},
		{name: "unknown path elsewhere", method: "GET", path: "/nope", status: 404,
			want: map[string]string{"Content-Type": jsonCT}, json: `{"status":404}`},
		{name: "create", method: "POST", path: "/api/notes", header: map[string]string{"Content-Type": jsonCT},
			body: `{"title":" milk ","body":"2 l"}`, status: 201,
			want: map[string]string{"Location": "/api/notes/2", "Content-Type": jsonCT},
			json: `{"id":2,"title":"milk","body":"2 l"}`},
		{name: "created note", method: "GET", path: "/api/notes/2", status: 200, json: `{"id":2,"title":"milk"}`},
		{name: "list of two", method: "GET", path: "/api/notes", status: 200, jsonLen: 2},
		{name: "no title", method: "POST", path: "/api/notes", header: map[string]string{"Content-Type": jsonCT},
			body: `{"body":"x"}`, status: 400, json: `{"error":"title is required","status":400}`},
		{name: "bad JSON", method: "POST", path: "/api/notes", header: map[string]string{"Content-Type": jsonCT},
			body: `{"title":`, status: 400, want: map[string]string{"Content-Type": jsonCT}, json: `{"status":400}`},
		{name: "not JSON", method: "POST", path: "/api/notes", header: map[string]string{"Content-Type": "text/plain"},
			body: `title=x`, status: 415,
			json: `{"error":"Unsupported Media Type: want application/json","status":415}`},
		{name: "too large", method: "POST", path: "/api/notes", header: map[string]string{"Content-Type": jsonCT},
			body: `{"title":"` + strings.Repeat("x", maxNoteBody) + `"}`, status: 413,
			want: map[string]string{"Content-Type": jsonCT}, json: `{"status":413}`},
		{name: "+json media type", method: "POST", path: "/api/notes",
			header: map[string]string{"Content-Type": "application/merge-patch+json; charset=utf-8"},
			body:   `{"title":"eggs"}`, status: 201, json: `{"id":3,"title":"eggs"}`},
		{name: "CORS preflight", method: "OPTIONS", path: "/api/notes",
			header: map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "content-type"},
			status: 204, want: map[string]string{"Access-Control-Allow-Origin": testOrigin,
				"Access-Control-Allow-Methods": "GET, POST", "Access-Control-Max-Age": "600"}},
		{name: "CORS simple request", method: "GET", path: "/api/notes/1", header: map[string]string{"Origin": testOrigin},
			status: 200, want: map[string]string{"Access-Control-Allow-Origin": testOrigin}},
		{name: "CORS other origin", method: "GET", path: "/api/notes/1", header: map[string]string{"Origin": "https://evil.example"},
			status: 200, absent: []string{"Access-Control-Allow-Origin"}},
		{name: "admin without credentials", method: "GET", path: "/admin", status: 401,
			want: map[string]string{"WWW-Authenticate": `Basic realm="notes admin", charset="UTF-8"`, "Content-Type": jsonCT},
			json: `{"error":"Unauthorized","status":401}`},
		{name: "admin, wrong password", method: "GET", path: "/admin",
			header: map[string]string{"Authorization": "Basic YWRtaW46bm9wZQ=="}, status: 401},
		{name: "unknown admin path without credentials", method: "GET", path: "/admin/other", status: 401,
			json: `{"status":401}`},
		{name: "delete without credentials", method: "DELETE", path: "/admin/notes/2", status: 401},
		{name: "admin", method: "GET", path: "/admin", header: map[string]string{"Authorization": auth},
			status: 200, json: `{"user":"admin"}`},
		{name: "unknown admin path", method: "GET", path: "/admin/other", header: map[string]string{"Authorization": auth},
			status: 404, want: map[string]string{"Content-Type": jsonCT}, json: `{"status":404}`},
		{name: "delete", method: "DELETE", path: "/admin/notes/2", header: map[string]string{"Authorization": auth},
			status: 204},
		{name: "deleted", method: "GET", path: "/api/notes/2", status: 404},
		{name: "delete again", method: "DELETE", path: "/admin/notes/2", header: map[string]string{"Authorization": auth},
			status: 404, json: `{"error":"note not found","status":404}`},
		{name: "page", method: "GET", path: "/", status: 200,
			want: map[string]string{"Content-Type": "text/html; charset=utf-8"}},
		{name: "asset", method: "GET", path: "/assets/app.js", status: 200},
	}
	for _, s := range setups {
		t.Run(s.String(), func(t *testing.T) {
			r := start(t, s)
			c := newClient()
			for _, tc := range calls {
				checkCall(t, c, r.url, tc)
			}
			// Every request was logged with its request ID (once
			// stopped, every handler has returned).
			if err := r.stop(); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(r.logs.String(), "msg=request"); n != len(calls) {
				t.Errorf("%d access log lines for %d requests:\n%s", n, len(calls), r.logs)
			}
		})
	}
}

func checkCall(t *testing.T, c *http.Client, base string, tc call) {
	t.Helper()
	req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range tc.header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the body: %v", tc.name, err)
	}
	if resp.StatusCode != tc.status {
		t.Errorf("%s: %s %s: status %d, want %d; body %q", tc.name, tc.method, tc.path, resp.StatusCode, tc.status, body)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id", tc.name)
	}
	for k, v := range tc.want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", tc.name, k, got, v)
		}
	}
	for _, k := range tc.absent {
		if got, ok := resp.Header[http.CanonicalHeaderKey(k)]; ok {
			t.Errorf("%s: %s = %q, want none", tc.name, k, got)
		}
	}
	if tc.json != "" {
		checkJSONFields(t, tc.name, body, tc.json)
	}
	if tc.jsonLen > 0 {
		var list []note
		if err := json.Unmarshal(body, &list); err != nil || len(list) != tc.jsonLen {
			t.Errorf("%s: body %q: %d notes (err %v), want %d", tc.name, body, len(list), err, tc.jsonLen)
		}
	}
}

// checkJSONFields checks that body is a JSON object with every field of
// the object want, with equal values.
func checkJSONFields(t *testing.T, name string, body []byte, want string) {
	t.Helper()
	var got, w map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Errorf("%s: body %q is not a JSON object: %v", name, body, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want %q: %v", name, want, err)
	}
	for k, v := range w {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s: body %s: %q = %v, want %v", name, body, k, got[k], v)
		}
	}
}

// TestCompression: JSON and static files come compressed when the client
// asks, and decode to what was sent uncompressed.
func TestCompression(t *testing.T) {
	for _, s := range setups {
		t.Run(s.String(), func(t *testing.T) {
			r := start(t, s)
			c := newClient()
			// Enough notes for the list to pass compression's minimum size.
			for range 20 {
				checkCall(t, c, r.url, call{name: "create", method: "POST", path: "/api/notes",
					header: map[string]string{"Content-Type": jsonCT},
					body:   `{"title":"a note long enough to add up","body":"and a body too"}`, status: 201})
			}
			for _, path := range []string{"/api/notes", "/assets/app.js"} {
				plain := get(t, c, r.url+path, "")
				if plain.Header.Get("Content-Encoding") != "" || len(plain.body) < 1024 {
					t.Fatalf("%s uncompressed: Content-Encoding %q, %d bytes", path, plain.Header.Get("Content-Encoding"), len(plain.body))
				}
				for _, enc := range []string{"gzip", "zstd"} {
					if enc == "zstd" && s.door != "native" {
						continue // gzhttp offers gzip only
					}
					resp := get(t, c, r.url+path, enc)
					if ce := resp.Header.Get("Content-Encoding"); ce != enc {
						t.Errorf("%s, Accept-Encoding %s: Content-Encoding %q", path, enc, ce)
						continue
					}
					if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
						t.Errorf("%s: Vary %q lacks Accept-Encoding", path, resp.Header.Get("Vary"))
					}
					if len(resp.body) >= len(plain.body) {
						t.Errorf("%s: %s body %d bytes, uncompressed %d", path, enc, len(resp.body), len(plain.body))
					}
					if got := decode(t, enc, resp.body); !bytes.Equal(got, plain.body) {
						t.Errorf("%s: %s body decodes to %d bytes, want the %d uncompressed", path, enc, len(got), len(plain.body))
					}
				}
			}
		})
	}
}

type response struct {
	*http.Response
	body []byte
}

func get(t *testing.T, c *http.Client, url, acceptEncoding string) response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %q", url, resp.StatusCode, body)
	}
	return response{resp, body}
}

func decode(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", enc, err)
	}
	return out
}

// TestMetrics: /metrics has the application's counter next to riptide's
// own (on riptide's doors).
func TestMetrics(t *testing.T) {
	for _, s := range setups {
		t.Run(s.String(), func(t *testing.T) {
			r := start(t, s)
			c := newClient()
			for range 3 {
				checkCall(t, c, r.url, call{name: "create", method: "POST", path: "/api/notes",
					header: map[string]string{"Content-Type": jsonCT}, body: `{"title":"t"}`, status: 201})
			}
			text := string(get(t, c, r.url+"/metrics", "").body)
			if !strings.Contains(text, "\nnotes_created_total 3\n") {
				t.Errorf("metrics lack notes_created_total 3:\n%s", text)
			}
			if !strings.Contains(text, "# TYPE notes_created_total counter\n") {
				t.Errorf("metrics lack the TYPE line of notes_created_total")
			}
			// riptide's own, on riptide's doors (their values are
			// riptide's tests' business: a request is counted once its
			// response is out, so the count here could lag).
			for _, m := range []string{"\n# TYPE riptide_requests_total counter\nriptide_requests_total ", "\nriptide_panics_total 0\n"} {
				if s.door != "nethttp" && !strings.Contains(text, m) {
					t.Errorf("metrics lack %q:\n%s", m, text)
				}
			}
		})
	}
}

// TestEventsEndOnShutdown: a client of /api/events gets the hello event
// and then each new note; Shutdown ends the stream and returns before its
// deadline (see stop), and Serve returns http.ErrServerClosed.
func TestEventsEndOnShutdown(t *testing.T) {
	for _, s := range setups {
		t.Run(s.String(), func(t *testing.T) {
			r := start(t, s)
			c := newClient()
			req, _ := http.NewRequest("GET", r.url+"/api/events", nil)
			req.Header.Set("Accept-Encoding", "gzip") // through the compressor on every door
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q", ct)
			}
			// Compressed, each event flushed through the compressor.
			if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
				t.Fatalf("Content-Encoding %q, want gzip", ce)
			}
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			events := bufio.NewReader(zr)
			if ev := readEvent(t, events); ev != "event: hello\ndata: {\"stream\":\"notes\"}\n" {
				t.Fatalf("first event %q", ev)
			}
			checkCall(t, newClient(), r.url, call{name: "create", method: "POST", path: "/api/notes",
				header: map[string]string{"Content-Type": jsonCT}, body: `{"title":"seen live"}`, status: 201})
			ev := readEvent(t, events)
			if !strings.HasPrefix(ev, "event: note\ndata: ") || !strings.Contains(ev, `"title":"seen live"`) {
				t.Fatalf("note event %q", ev)
			}

			// Shutdown with the stream open.
			if err := r.stop(); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if !errors.Is(r.serveErr, http.ErrServerClosed) {
				t.Errorf("Serve returned %v, want http.ErrServerClosed", r.serveErr)
			}
			if rest, err := io.ReadAll(events); err != nil || len(rest) != 0 {
				t.Errorf("after Shutdown the stream ended with %q, %v; want a clean end", rest, err)
			}
		})
	}
}

// readEvent reads one server-sent event (up to its blank line).
func readEvent(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %q, %v", ev.String()+line, err)
		}
		if line == "\n" {
			return ev.String()
		}
		ev.WriteString(line)
	}
}

// TestNativeMethodNotAllowed: on the native door a method a route does not
// take is a JSON 405 with Allow (the compat door's ServeMux catch-all
// answers 404 instead, see compat.go), also under /admin once
// authenticated.
func TestNativeMethodNotAllowed(t *testing.T) {
	r := start(t, setup{"native", riptide.EngineAuto})
	c := newClient()
	checkCall(t, c, r.url, call{name: "PUT a note", method: "PUT", path: "/api/notes/1", status: 405,
		want: map[string]string{"Allow": "GET, HEAD, OPTIONS", "Content-Type": jsonCT}, json: `{"status":405}`})
	checkCall(t, c, r.url, call{name: "GET an admin note, no credentials", method: "GET", path: "/admin/notes/1", status: 401})
	checkCall(t, c, r.url, call{name: "GET an admin note", method: "GET", path: "/admin/notes/1",
		header: map[string]string{"Authorization": auth}, status: 405,
		want: map[string]string{"Allow": "DELETE, OPTIONS", "Content-Type": jsonCT}, json: `{"status":405}`})
}

// TestParseEngine: -engine takes the names Engine.String gives.
func TestParseEngine(t *testing.T) {
	for _, e := range []riptide.Engine{riptide.EngineAuto, riptide.EngineGoroutine, riptide.EngineEventLoop, riptide.EngineOnLoop} {
		if got, err := parseEngine(e.String()); got != e || err != nil {
			t.Errorf("parseEngine(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := parseEngine("epoll"); err == nil {
		t.Error(`parseEngine("epoll") did not fail`)
	}
}
