package riptide_test

// Regression tests for the native door's footguns of issue 28 (items 1-9),
// run through a real server on the engine RIPTIDE_ENGINE selects.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/middleware"
	"github.com/riptide-http/riptide/router"
)

// ndServe starts srv on loopback and returns its base URL; it is closed
// when the test ends.
func ndServe(t *testing.T, srv *riptide.Server) string {
	t.Helper()
	return "http://" + riptide.ServeTest(t, srv, riptide.TestServeOptions{}).Addr
}

// ndGet sends one request with a fresh connection and returns the response
// with its body read.
func ndGet(t *testing.T, method, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

// TestRecoverAnswers500 (issue 28, item 1): a panic under Recover is
// counted in Stats.Panics, logged by AccessLog with status 500, and
// answered 500 with the X-Request-Id that RequestID set.
func TestRecoverAnswers500(t *testing.T) {
	t.Parallel()
	var logs riptide.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	app := riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetHeader("Content-Type", "application/json")
		c.WriteString(`{"half":`)
		panic("boom")
	})
	srv := &riptide.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: middleware.Chain(app,
			middleware.Recover(logger),
			middleware.AccessLog(logger, slog.LevelInfo, nil),
			middleware.RequestID())}
	url := ndServe(t, srv)
	res, body := ndGet(t, "GET", url+"/p", "X-Request-Id", "req-42")
	if res.StatusCode != 500 || res.Header.Get("X-Request-Id") != "req-42" ||
		strings.Contains(body, "half") || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("got %d %q, X-Request-Id %q, Content-Type %q; want a plain 500 with X-Request-Id req-42",
			res.StatusCode, body, res.Header.Get("X-Request-Id"), res.Header.Get("Content-Type"))
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.Panics != 1 {
		t.Errorf("Stats.Panics = %d, want 1", st.Panics)
	}
	for _, want := range []string{"panic serving request", "msg=request", "status=500", "request_id=req-42"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestAccessLogLogsPanic (issue 28, item 1): without Recover the server
// answers the panic, and AccessLog still logs the request, as 500.
func TestAccessLogLogsPanic(t *testing.T) {
	t.Parallel()
	var logs riptide.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	srv := &riptide.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: middleware.AccessLog(logger, slog.LevelInfo, nil)(riptide.HandlerFunc(func(c *riptide.Ctx) {
			panic("boom")
		}))}
	url := ndServe(t, srv)
	if res, _ := ndGet(t, "GET", url+"/q"); res.StatusCode != 500 {
		t.Errorf("status %d, want 500", res.StatusCode)
	}
	for _, want := range []string{"msg=request", "target=/q", "status=500", "panicked=true"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.Panics != 1 {
		t.Errorf("Stats.Panics = %d, want 1", st.Panics)
	}
}

// TestHeadFixedByFirstWrite (issue 28, item 5): status and header fields
// set after the first Write are ignored whatever the body's size (before,
// a small buffered body still took them and a large one did not).
func TestHeadFixedByFirstWrite(t *testing.T) {
	t.Parallel()
	for _, size := range []int{10, 20 << 10} {
		srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.SetHeader("X-Before", "1")
			c.Write(bytes.Repeat([]byte("x"), size))
			c.SetStatus(201)
			c.SetHeader("X-After", "1")
			c.DelHeader("X-Before")
			c.SetContentType("application/json")
			if err := c.WriteInformational(103); err != riptide.ErrCommitted {
				c.SetTrailer("X-Err", fmt.Sprint(err))
			}
		})}
		url := ndServe(t, srv)
		res, body := ndGet(t, "GET", url+"/")
		if res.StatusCode != 200 || res.Header.Get("X-After") != "" || res.Header.Get("X-Before") != "1" ||
			res.Header.Get("Content-Type") == "application/json" || len(body) != size || res.Trailer.Get("X-Err") != "" {
			t.Errorf("%d-byte body: status %d, X-After %q, X-Before %q, Content-Type %q, %d bytes; want 200 with only X-Before",
				size, res.StatusCode, res.Header.Get("X-After"), res.Header.Get("X-Before"), res.Header.Get("Content-Type"), len(body))
		}
	}
}

// TestGroupMiddlewareOwnsPrefix (issue 28, items 2, 3 and 8) with the real
// middleware: BasicAuth on a group answers 401 for paths the group does not
// route, CORS on a group answers preflights, and the router's NotFound
// shapes the 404 as JSON.
func TestGroupMiddlewareOwnsPrefix(t *testing.T) {
	t.Parallel()
	r := router.New()
	r.NotFound = riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetStatus(404)
		c.SetContentType("application/json")
		c.WriteString(`{"error":"not found"}`)
	})
	admin := r.Group("/admin", middleware.BasicAuth("admin", middleware.Users(map[string]string{"ann": "pw"})))
	admin.HandleFunc("GET /users", func(c *riptide.Ctx) { c.WriteString("users of " + middleware.BasicAuthUser(c)) })
	api := r.Group("/api", middleware.CORS(middleware.CORSOptions{AllowedOrigins: []string{"https://app.example"}}))
	api.HandleFunc("POST /items", func(c *riptide.Ctx) { c.WriteString("made") })
	url := ndServe(t, &riptide.Server{Handler: r})

	if res, _ := ndGet(t, "GET", url+"/admin/other"); res.StatusCode != 401 {
		t.Errorf("GET /admin/other without credentials: %d, want 401", res.StatusCode)
	}
	res, body := ndGet(t, "GET", url+"/admin/other", "Authorization", "Basic YW5uOnB3")
	if res.StatusCode != 404 || body != `{"error":"not found"}` {
		t.Errorf("GET /admin/other as ann: %d %q, want the JSON 404", res.StatusCode, body)
	}
	if _, body := ndGet(t, "GET", url+"/admin/users", "Authorization", "Basic YW5uOnB3"); body != "users of ann" {
		t.Errorf("GET /admin/users as ann: %q", body)
	}
	res, _ = ndGet(t, "OPTIONS", url+"/api/items", "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	if res.StatusCode >= 300 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v, want a CORS answer", res.StatusCode, res.Header)
	}
}

// TestShutdownEndsStreams (issue 28, item 7): a server-sent-events handler
// that selects on ShuttingDown ends when Shutdown begins, and a
// RegisterOnShutdown function runs, so Shutdown returns without waiting
// for its deadline.
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	hookRan := make(chan struct{})
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/event-stream")
		c.WriteString("data: hello\n\n")
		c.Flush()
		select {
		case <-c.ShuttingDown():
			c.WriteString("data: bye\n\n")
		case <-c.Done():
		case <-time.After(time.Minute):
			c.WriteString("data: timed out\n\n")
		}
	})}
	srv.RegisterOnShutdown(func() { close(hookRan) })
	url := ndServe(t, srv)
	res, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: hello\n" {
		t.Fatalf("first event: %q %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v, want nil (the stream should have ended)", err)
	}
	<-hookRan
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "data: bye") {
		t.Errorf("stream ended with %q, want the bye event", rest)
	}
}

// TestErrorHandlerShapesErrors (issue 28, item 8): Server.ErrorHandler
// gives BodyLimit's 413, BasicAuth's 401 and the router's 404 and 405 one
// JSON shape, header fields they set (WWW-Authenticate, Allow) kept.
func TestErrorHandlerShapesErrors(t *testing.T) {
	r := router.New()
	r.Use(middleware.BodyLimit(10))
	r.HandleFunc("POST /upload", func(c *riptide.Ctx) { c.WriteString("stored") })
	r.Group("/admin", middleware.BasicAuth("admin", middleware.Users(nil))).HandleFunc("GET /x", func(*riptide.Ctx) {})
	srv := &riptide.Server{Handler: r, ErrorHandler: func(c *riptide.Ctx, code int, msg string) {
		c.SetStatus(code)
		c.SetContentType("application/json")
		fmt.Fprintf(c, `{"code":%d,"error":%q}`, code, msg)
	}}
	url := ndServe(t, srv)
	for _, tc := range []struct {
		method, path, body, header, value string
		code                              int
		want                              string
	}{
		{"POST", "/upload", strings.Repeat("x", 11), "", "", 413, `{"code":413,"error":"Request Entity Too Large"}`},
		{"GET", "/admin/x", "", "Www-Authenticate", `Basic realm="admin", charset="UTF-8"`, 401, `{"code":401,"error":"Unauthorized"}`},
		{"GET", "/nowhere", "", "", "", 404, `{"code":404,"error":"404 page not found"}`},
		{"GET", "/upload", "", "Allow", "OPTIONS, POST", 405, `{"code":405,"error":"Method Not Allowed"}`},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code || string(body) != tc.want || res.Header.Get("Content-Type") != "application/json" ||
			tc.header != "" && res.Header.Get(tc.header) != tc.value {
			t.Errorf("%s %s: %d %q %v, want %d %q", tc.method, tc.path, res.StatusCode, body, res.Header, tc.code, tc.want)
		}
	}
}

// TestMetricsWithAppMetrics (issue 28, item 9): the application's metrics
// are served next to riptide's on one endpoint, and a net/http metrics
// handler (promhttp's kind) mounts on the native router.
func TestMetricsWithAppMetrics(t *testing.T) {
	t.Parallel()
	var orders atomic.Uint64
	orders.Add(3)
	srv := &riptide.Server{}
	r := router.New()
	r.Handle("GET /metrics", srv.MetricsHandlerWith(func(b []byte) []byte {
		b = append(b, "# HELP shop_orders_total Orders placed.\n# TYPE shop_orders_total counter\nshop_orders_total "...)
		return append(strconv.AppendUint(b, orders.Load(), 10), '\n')
	}))
	r.Handle("GET /metrics/app", riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "app_up 1\n")
	})))
	srv.Handler = r
	url := ndServe(t, srv)
	_, body := ndGet(t, "GET", url+"/metrics")
	if !strings.Contains(body, "\nshop_orders_total 3\n") || !strings.Contains(body, "riptide_requests_total") {
		t.Errorf("metrics lack the app's or riptide's own:\n%s", body)
	}
	if _, body := ndGet(t, "GET", url+"/metrics/app"); body != "app_up 1\n" {
		t.Errorf("mounted handler: %q", body)
	}
}
