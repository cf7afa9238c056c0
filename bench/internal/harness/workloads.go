package harness

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// H2Mode says how an HTTP/2 workload reaches the server.
type H2Mode string

const (
	// H2None is HTTP/1.1, driven by wrk.
	H2None H2Mode = ""
	// H2C is cleartext HTTP/2 with prior knowledge: the server runs with
	// -h2c, h2load connects to http://.
	H2C H2Mode = "h2c"
	// H2TLS is HTTP/2 over TLS chosen by ALPN: the server runs with -tls
	// (self-signed certificate), h2load connects to https://.
	H2TLS H2Mode = "tls"
)

// H2Streams is h2load's -m, the concurrent streams per connection of the
// HTTP/2 workloads.
const H2Streams = 10

// Workload is one traffic shape (wrk for HTTP/1.1, h2load for HTTP/2), and
// the response every server must give to it.
type Workload struct {
	// Name is the identifier used by -workloads and in reports.
	Name string
	// Desc is a one-line description for reports.
	Desc string
	// Method and Path form the request line; Method "" means GET.
	Method, Path string
	// Headers are sent in addition to Host (and Content-Length with Body).
	Headers map[string]string
	// Body is the request body, if any.
	Body []byte
	// Pipeline is the number of requests written per batch; 0 or 1 means
	// one request at a time.
	Pipeline int
	// Conns overrides the configured connection count when non-zero.
	Conns int
	// CeilingArgs are the extra flags the canned-response ceiling needs to
	// send a response of the right shape for this workload.
	CeilingArgs []string
	// NeedsEcho marks workloads that need a server echoing the request body.
	NeedsEcho bool
	// HTTP2, when set, makes this an HTTP/2 workload driven by h2load
	// (-t1 -c<conns> -m H2Streams) instead of wrk; only servers with
	// HTTP2 support run it. Method, Headers, Body and Pipeline are unused.
	HTTP2 H2Mode
	// Profile, when set, is the route profile the servers run with for
	// this workload (benchserver.ProfileRouted); only Go servers have one.
	Profile benchserver.Profile
	// Idle, when non-zero, makes this the idle-memory workload: that many
	// keep-alive connections each make one GET and then stay open and
	// idle while the server's RSS is measured (idle.go); no load tool.
	Idle int
	// TLS makes the workload HTTP/1.1 over TLS: the server runs with -tls
	// (self-signed certificate). wrk offers no ALPN protocol (so every
	// server answers HTTP/1.1); the idle workload's client offers ALPN
	// http/1.1 only. Go servers and nginx (with ssl on a certificate the
	// harness writes) run the wrk one, only Go servers the idle one.
	TLS bool
	// HTTP3 makes this an HTTP/3 workload, driven by the harness's own
	// quic-go client (h3load.go); only servers with HTTP3 run it.
	HTTP3 bool
	// RustH3, with HTTP3, drives the workload with the Rust client
	// (hyperium h3 on quinn, bench/h3load-rs: h3rs.go) instead of the
	// quic-go one; a run skips it when that client can be neither found
	// nor built.
	RustH3 bool
	// WS, when set, makes this a WebSocket workload (ws.go), driven by the
	// harness's own client; only WebSocket servers (Server.WS) run it.
	// Conns is its connection count (subscribers for WSBroadcast).
	WS WSMode
	// WSMsg is the size of the text messages a WebSocket workload sends.
	WSMsg int
	// Extra workloads are not in the default set: they run only when named
	// in -workloads (the HTTP/2 ones, so that a default run stays under 30
	// minutes).
	Extra bool

	// ExpectType is the Content-Type prefix of a correct response.
	ExpectType string
	// ExpectBody is the body of a correct response (status 200).
	ExpectBody []byte
	// ExpectClose says the server must close the connection after replying.
	ExpectClose bool
	// ExpectLen, when set, is the body length of a correct response,
	// checked instead of ExpectBody (a bulk body, not compared byte by
	// byte under load).
	ExpectLen int64
}

// EchoBodySize is the request body size of the echo workload.
const EchoBodySize = 1024

// PipelineDepth is the request batch size of the pipelined workload.
const PipelineDepth = 16

// ManyConns is the connection count of the c1000 workload.
const ManyConns = 1000

// jsonBody is what GET /json must return.
const jsonBody = `{"message":"Hello, World!"}`

// Workloads returns every workload in report order.
func Workloads() []Workload {
	hello := []byte(benchserver.Hello)
	echo := bytes.Repeat([]byte("x"), EchoBodySize)
	return []Workload{
		{Name: "plaintext", Desc: "keep-alive GET / (13-byte text/plain)", Path: "/",
			ExpectType: "text/plain", ExpectBody: hello},
		{Name: "json", Desc: "keep-alive GET /json, encoded per request", Path: "/json",
			CeilingArgs: []string{"-body", jsonBody, "-type", "application/json"},
			ExpectType:  "application/json", ExpectBody: []byte(jsonBody)},
		{Name: "pipelined", Desc: fmt.Sprintf("GET / pipelined, depth %d", PipelineDepth), Path: "/",
			Pipeline: PipelineDepth, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "echo", Desc: fmt.Sprintf("keep-alive POST /echo, %d-byte body echoed", EchoBodySize),
			Method: "POST", Path: "/echo", Body: echo,
			Headers:   map[string]string{"Content-Type": "application/octet-stream"},
			NeedsEcho: true,
			// The ceiling cannot echo; its canned reply is byte-for-byte the echo.
			CeilingArgs: []string{"-size", strconv.Itoa(EchoBodySize), "-fill", "x", "-type", "application/octet-stream"},
			ExpectType:  "application/octet-stream", ExpectBody: echo},
		{Name: "64k", Desc: "keep-alive GET /64k (65536-byte body)", Path: "/64k",
			CeilingArgs: []string{"-size", strconv.Itoa(benchserver.Body64KSize), "-fill", "0123456789abcdef", "-type", "application/octet-stream"},
			ExpectType:  "application/octet-stream", ExpectBody: benchserver.Body64K},
		{Name: "close", Desc: "GET / with Connection: close (one request per connection)", Path: "/",
			Headers:     map[string]string{"Connection": "close"},
			CeilingArgs: []string{"-close"},
			ExpectType:  "text/plain", ExpectBody: hello, ExpectClose: true},
		{Name: "c1000", Desc: fmt.Sprintf("keep-alive GET / over %d connections", ManyConns), Path: "/",
			Conns: ManyConns, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "tls", Desc: "keep-alive GET / over TLS (HTTP/1.1, self-signed ECDSA P-256)", Path: "/",
			TLS: true, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "routed", Desc: fmt.Sprintf("keep-alive GET %s: a 3-parameter route of a %d-route app behind 3 middleware (recovery, request ID, access log at a disabled level)", benchserver.RoutedPath, len(benchserver.RoutedRoutes)),
			Path: benchserver.RoutedPath, Profile: benchserver.ProfileRouted, Extra: true,
			ExpectType: "text/plain", ExpectBody: []byte(benchserver.RoutedBody)},
		{Name: "static4k", Desc: "keep-alive GET /static/4k.txt: a 4 KiB file from each server's static file handler (riptide static, http.FileServer, fasthttp.FS, nginx)",
			Path: benchserver.StaticFiles[0].Path, Profile: benchserver.ProfileStatic, Extra: true,
			ExpectType: "text/plain", ExpectBody: benchserver.StaticBody(benchserver.StaticFiles[0].Size)},
		{Name: "static1m", Desc: "keep-alive GET /static/1m.txt: a 1 MiB file from each server's static file handler",
			Path: benchserver.StaticFiles[1].Path, Profile: benchserver.ProfileStatic, Extra: true,
			ExpectType: "text/plain", ExpectBody: benchserver.StaticBody(benchserver.StaticFiles[1].Size)},
		{Name: "idle", Desc: fmt.Sprintf("RSS growth per idle keep-alive connection: %d connections, one GET / each, then idle", IdleConns),
			Path: "/", Idle: IdleConns, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "idletls", Desc: fmt.Sprintf("RSS growth per idle TLS keep-alive connection (HTTP/1.1, ALPN http/1.1, self-signed ECDSA P-256): %d connections, one GET / each, then idle", TLSIdleConns),
			Path: "/", Idle: TLSIdleConns, TLS: true, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h2idle", Desc: fmt.Sprintf("RSS growth per idle HTTP/2 (h2c prior knowledge) connection: %d connections, one GET / stream each, then idle", H2IdleConns),
			Path: "/", Idle: H2IdleConns, HTTP2: H2C, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "wsidle", Desc: fmt.Sprintf("RSS and live-heap growth per idle WebSocket connection: connections upgraded (%d; -ws-conns), one %d-byte text message echoed on each, then idle", WSIdleConns, WSSmallMsg),
			Path: "/", WS: WSIdle, WSMsg: WSSmallMsg, Conns: WSIdleConns, Extra: true},
		{Name: "wsecho", Desc: fmt.Sprintf("WebSocket echo: connections (%d; -ws-conns) each echoing %d-byte text messages, one in flight per connection", WSEchoConns, WSSmallMsg),
			Path: "/", WS: WSEcho, WSMsg: WSSmallMsg, Conns: WSEchoConns, Extra: true},
		{Name: "wsecho1k", Desc: fmt.Sprintf("WebSocket echo: connections (%d; -ws-conns) each echoing %d-byte text messages, one in flight per connection", WSEchoConns, WSLargeMsg),
			Path: "/", WS: WSEcho, WSMsg: WSLargeMsg, Conns: WSEchoConns, Extra: true},
		{Name: "wsechoc1000", Desc: fmt.Sprintf("WebSocket echo: connections (%d; -ws-conns) each echoing %d-byte text messages, one in flight per connection", WSManyConns, WSSmallMsg),
			Path: "/", WS: WSEcho, WSMsg: WSSmallMsg, Conns: WSManyConns, Extra: true},
		{Name: "wsbroadcast", Desc: fmt.Sprintf("WebSocket broadcast: one publisher's %d-byte text messages written by the server to each subscriber (%d; -ws-conns), at most %d messages in flight; deliveries per second", WSSmallMsg, WSBroadcastConns, WSBroadcastWindow),
			Path: "/broadcast", WS: WSBroadcast, WSMsg: WSSmallMsg, Conns: WSBroadcastConns, Extra: true},
		{Name: "h2idletls", Desc: fmt.Sprintf("RSS growth per idle HTTP/2-over-TLS connection (ALPN h2, self-signed ECDSA P-256): %d connections, one GET / stream each, then idle", H2IdleConns),
			Path: "/", Idle: H2IdleConns, HTTP2: H2TLS, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h3idle", Desc: fmt.Sprintf("RSS growth per idle HTTP/3 (QUIC) connection: %d connections from the harness's quic-go client, one GET / each, then idle", H3IdleConns),
			Path: "/", Idle: H3IdleConns, HTTP3: true, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h2c", Desc: fmt.Sprintf("HTTP/2 cleartext (prior knowledge) GET /, %d streams per connection", H2Streams),
			Path: "/", HTTP2: H2C, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h2tls", Desc: fmt.Sprintf("HTTP/2 over TLS (ALPN h2, self-signed ECDSA P-256) GET /, %d streams per connection", H2Streams),
			Path: "/", HTTP2: H2TLS, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h3", Desc: fmt.Sprintf("HTTP/3 GET / (13-byte text/plain), %d streams per connection", H3Streams),
			Path: "/", HTTP3: true, Conns: H3Conns, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h3bulk", Desc: fmt.Sprintf("HTTP/3 bulk download: GET %s (%d MiB), one connection, one request at a time", benchserver.BulkPath, benchserver.BulkSize>>20),
			Path: benchserver.BulkPath, HTTP3: true, Conns: 1, Extra: true, ExpectType: "application/octet-stream", ExpectLen: benchserver.BulkSize},
		{Name: "h3rs", Desc: fmt.Sprintf("HTTP/3 GET / (13-byte text/plain), %d streams per connection, from the Rust h3 + quinn client (bench/%s; needs cargo or a built client)", H3Streams, H3rsDir),
			Path: "/", HTTP3: true, RustH3: true, Conns: H3Conns, Extra: true, ExpectType: "text/plain", ExpectBody: hello},
		{Name: "h3rsbulk", Desc: fmt.Sprintf("HTTP/3 bulk download as h3bulk (GET %s, %d MiB, one connection, one request at a time) from the Rust h3 + quinn client, which costs less CPU per MB than the harness's quic-go client (needs cargo or a built client)", benchserver.BulkPath, benchserver.BulkSize>>20),
			Path: benchserver.BulkPath, HTTP3: true, RustH3: true, Conns: 1, Extra: true, ExpectType: "application/octet-stream", ExpectLen: benchserver.BulkSize},
	}
}

// Tool is the load generator that drives w: "wrk", "h2load", "idle" (the
// harness's idle client), "h3" (an HTTP/3 client run by the harness:
// quic-go's, or the Rust one with RustH3) or "ws" (the harness's
// WebSocket client).
func (w Workload) Tool() string {
	if w.WS != WSNone {
		return "ws"
	}
	if w.Idle > 0 {
		return "idle"
	}
	if w.HTTP3 {
		return "h3"
	}
	if w.HTTP2 != H2None {
		return "h2load"
	}
	return "wrk"
}

// ServerFlags are the extra server flags w needs (-h2c or -tls, or its
// -profile).
func (w Workload) ServerFlags() []string {
	if w.Profile != "" {
		return []string{"-profile", string(w.Profile)}
	}
	if w.TLS {
		return []string{"-tls"}
	}
	switch w.HTTP2 {
	case H2C:
		return []string{"-h2c"}
	case H2TLS:
		return []string{"-tls"}
	}
	return nil
}

// LoadCommand describes the load generator invocation for reports, e.g.
// "wrk -t1 -c50" or "h2load -t1 -c50 -m10", with threads load threads
// (at most conns).
func (w Workload) LoadCommand(conns, threads int) string {
	t := max(min(threads, conns), 1)
	switch w.WS {
	case WSIdle:
		return fmt.Sprintf("harness WebSocket client, %d idle connections after one echoed message each", conns)
	case WSEcho:
		return fmt.Sprintf("harness WebSocket client, %d connections × 1 message in flight", conns)
	case WSBroadcast:
		return fmt.Sprintf("harness WebSocket client, 1 publisher, %d subscribers, %d messages in flight", conns, WSBroadcastWindow)
	}
	if w.Idle > 0 && w.HTTP2 == H2TLS {
		return fmt.Sprintf("%d idle HTTP/2-over-TLS connections after one GET stream each", w.Idle)
	}
	if w.Idle > 0 && w.HTTP2 != H2None {
		return fmt.Sprintf("%d idle HTTP/2 connections after one GET stream each", w.Idle)
	}
	if w.Idle > 0 && w.HTTP3 {
		return fmt.Sprintf("%d idle HTTP/3 connections after one GET each", w.Idle)
	}
	if w.Idle > 0 && w.TLS {
		return fmt.Sprintf("%d idle TLS keep-alive connections after one GET each", w.Idle)
	}
	if w.Idle > 0 {
		return fmt.Sprintf("%d idle keep-alive connections after one GET each", w.Idle)
	}
	if w.HTTP3 && w.RustH3 {
		return fmt.Sprintf("h3load-rs (Rust h3 + quinn), %d connections × %d streams", conns, w.h3Streams())
	}
	if w.HTTP3 {
		return fmt.Sprintf("harness quic-go client, %d connections × %d streams", conns, w.h3Streams())
	}
	if w.HTTP2 != H2None {
		return fmt.Sprintf("h2load -t%d -c%d -m%d", t, conns, H2Streams)
	}
	if w.TLS {
		return fmt.Sprintf("wrk -t%d -c%d, https", t, conns)
	}
	return fmt.Sprintf("wrk -t%d -c%d", t, conns)
}

// scheme is the URL scheme the load generator uses: https for a TLS
// workload.
func (w Workload) scheme() string {
	if w.TLS {
		return "https"
	}
	return "http"
}

// h3Streams is the requests each connection of an HTTP/3 workload keeps
// in flight: H3Streams, one for the bulk download.
func (w Workload) h3Streams() int {
	if w.ExpectLen > 0 {
		return 1
	}
	return H3Streams
}

func (w Workload) method() string {
	if w.Method == "" {
		return "GET"
	}
	return w.Method
}

func (w Workload) headerNames() []string {
	names := make([]string, 0, len(w.Headers))
	for k := range w.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Script returns the wrk Lua script (without the harness's done()) that
// sends this workload's requests.
func (w Workload) Script() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %q\n", w.method())
	if w.Body != nil {
		fmt.Fprintf(&b, "wrk.body = %q\n", w.Body)
	}
	for _, k := range w.headerNames() {
		fmt.Fprintf(&b, "wrk.headers[%q] = %q\n", k, w.Headers[k])
	}
	if w.Pipeline > 1 {
		fmt.Fprintf(&b, `local batch
init = function(args)
  local r = {}
  for i = 1, %d do r[i] = wrk.format() end
  batch = table.concat(r)
end
request = function() return batch end
`, w.Pipeline)
	}
	return b.String()
}

// RawRequests returns the bytes of one batch of this workload's requests
// as wrk sends them to host (Pipeline requests back to back).
func (w Workload) RawRequests(host string) []byte {
	var b bytes.Buffer
	for i := 0; i < max(w.Pipeline, 1); i++ {
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", w.method(), w.Path, host)
		for _, k := range w.headerNames() {
			fmt.Fprintf(&b, "%s: %s\r\n", k, w.Headers[k])
		}
		if w.Body != nil {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(w.Body))
		}
		b.WriteString("\r\n")
		b.Write(w.Body)
	}
	return b.Bytes()
}

// LookupWorkload returns the workload with the given name.
func LookupWorkload(name string) (Workload, bool) {
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// selectNames resolves a comma-separated list of names ("" or "all" for
// every default entry) against all, in the order of all.
func selectNames[T any](list string, all []T, name func(T) string, def func(T) bool) ([]T, error) {
	if list == "" || list == "all" {
		var out []T
		for _, x := range all {
			if def(x) {
				out = append(out, x)
			}
		}
		return out, nil
	}
	known := map[string]bool{}
	var names []string
	for _, x := range all {
		known[name(x)] = true
		names = append(names, name(x))
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !known[n] {
			return nil, fmt.Errorf("unknown name %q (known: %s)", n, strings.Join(names, ", "))
		}
		want[n] = true
	}
	var out []T
	for _, x := range all {
		if want[name(x)] {
			out = append(out, x)
		}
	}
	return out, nil
}

// SelectServers resolves a -servers list ("" for the defaults).
func SelectServers(list string) ([]Server, error) {
	return selectNames(list, Registry(), func(s Server) string { return s.Name }, func(s Server) bool { return s.Default })
}

// SelectWorkloads resolves a -workloads list ("" or "all" for every
// workload except the Extra ones, which run only when named).
func SelectWorkloads(list string) ([]Workload, error) {
	return selectNames(list, Workloads(), func(w Workload) string { return w.Name }, func(w Workload) bool { return !w.Extra })
}
