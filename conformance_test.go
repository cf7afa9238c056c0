package riptide_test

// The Http11Probe conformance suite (package probe) run against riptide in
// CI, once on the native API (probeRoutes) and once through the compat door
// (riptide.FromHTTP on an http.ServeMux, conformance_compat_test.go), each
// serving the probe routes of probe/doc.go with a zero-value Server. The
// test fails on any Fail verdict not in openFails and on any Warn that is
// not in the explicit lists below with the reason it is kept; a listed Warn
// or open Fail that no longer happens fails too, so the lists stay exactly
// what riptide does. docs/conformance.md carries the same lists (rendered by
// TestConformanceWarnListDoc into testdata/conformance/warns.md, which
// cmd/riptide-probe/conformance.sh appends after the side-by-side table it
// builds with TestConformanceServe as the riptide server).

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/probe"
)

// keptWarn is one Warn verdict riptide keeps on purpose.
type keptWarn struct {
	id     string
	reason string
}

// commonWarns are the Warns riptide keeps on both APIs: the server parses
// and frames exactly as RFC 9112 allows, and the rest is left to handlers.
var commonWarns = []keptWarn{
	// Accepted because the RFC grammar allows it; framing is unambiguous.
	{"SMUG-CL-DOUBLE-ZERO", "`Content-Length: 00` is 1*DIGIT (RFC 9110 §8.6): the value 0, framed exactly; rejecting valid input buys nothing"},
	{"SMUG-CL-LEADING-ZEROS", "`005` is 1*DIGIT and means 5 (RFC 9110 §8.6); riptide parses it as decimal, never octal, so no two readings exist"},
	{"SMUG-CL-LEADING-ZEROS-OCTAL", "`0200` is 200 in decimal, the only reading RFC 9110 §8.6 gives; the 200-byte body is framed exactly"},
	{"SMUG-CL-EXTRA-LEADING-SP", "leading whitespace is OWS around the field value (RFC 9110 §5.5), stripped before the value is parsed"},
	{"SMUG-CL-TRAILING-SPACE", "trailing whitespace is OWS around the field value (RFC 9110 §5.5), stripped before the value is parsed"},
	{"MAL-CL-TAB-BEFORE-VALUE", "HTAB is OWS (RFC 9110 §5.6.3); `Content-Length:\t5` is a valid field line"},
	{"SMUG-TRANSFER_ENCODING", "`Transfer_Encoding` is a different, unknown field (`_` is a tchar); riptide never maps `_` to `-`, so the body is framed by Content-Length alone"},
	{"NORM-UNDERSCORE-CL", "`Content_Length` is kept as its own unknown field and never normalised to Content-Length; the handler sees both names as sent, framing uses only the real one"},
	{"NORM-UNDERSCORE-TE", "`Transfer_Encoding` is kept as its own unknown field and never normalised; framing uses Content-Length"},
	{"SMUG-TRAILER-AUTH", "trailer fields are kept apart from the header section (Ctx.Trailers / Request.Trailer) and never merged into it (RFC 9110 §6.5.1), so a trailer cannot pose as a header"},
	{"SMUG-TRAILER-CL", "a Content-Length trailer is not used for framing (RFC 9112 §7.1.2) and not merged into the headers"},
	{"SMUG-TRAILER-CONTENT-TYPE", "trailers are not merged into the header section (RFC 9110 §6.5.1)"},
	{"SMUG-TRAILER-HOST", "a Host trailer is not merged into the header section and does not change the request's Host"},
	{"SMUG-TRAILER-TE", "a Transfer-Encoding trailer is not used for framing and not merged into the headers"},
	{"SMUG-ABSOLUTE-URI-HOST-MISMATCH", "RFC 9112 §3.2.2: with an absolute-form target the server MUST use the target's authority and ignore Host; 2xx is the specified behaviour"},
	{"SMUG-EXPECT-100-CL", "`100 Continue` then 200 is exactly RFC 9110 §10.1.1; the check warns on any 2xx"},
	{"SMUG-CL0-BODY-POISON", "`Content-Length: 0` means no body, so the following `XGET / HTTP/1.1` is parsed as the next request (a valid token method, answered 405); both ends agree on the framing, the check prefers a close"},
	{"COMP-GET-WITH-CL-BODY", "a GET body has no meaning but is framed by Content-Length and consumed (RFC 9110 §9.3.1); answering it keeps clients that send one working"},
	{"SMUG-HEAD-CL-BODY", "the HEAD body is framed by Content-Length and consumed, so it cannot become a request (RFC 9110 §9.3.2)"},
	{"SMUG-OPTIONS-CL-BODY", "the OPTIONS body is framed by Content-Length and consumed, so it cannot become a request"},
	{"COMP-LEADING-CRLF", "RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line; riptide does (bounded by the head limit)"},
	{"COMP-HTTP10-NO-HOST", "Host is required of HTTP/1.1 requests only (RFC 9112 §3.2); HTTP/1.0 requests without it are served and closed"},
	{"COMP-HTTP12-VERSION", "505 for HTTP/1.2 (RFC 9110 §15.6.6); the check has no Pass outcome"},
	{"COMP-DUPLICATE-CT", "riptide does not interpret Content-Type; both fields reach the handler, which owns media-type validation"},
	{"COMP-ACCEPT-NONSENSE", "content negotiation belongs to the handler; ignoring Accept and sending the default representation is allowed (RFC 9110 §12.5.1)"},
	{"COMP-UPGRADE-INVALID-VER", "the server does not answer an Upgrade itself: WebSocket is a handler's (package websocket answers a bad version with 426); here the Upgrade request reaches a handler that ignores it, which RFC 9110 §7.8 allows"},
	{"MAL-RANGE-OVERLAPPING", "the probe route has no range support and sends the full 200, as RFC 9110 §14.2 allows; range handling is the handler's"},
	{"MAL-URL-PERCENT-CRLF", "%0d%0a is a valid percent-encoding; the path reaches the handler still encoded (Ctx.Path), so nothing is injected; the route answers 404"},
	{"MAL-URL-PERCENT-NULL", "%00 is a valid percent-encoding passed through encoded; decoding (and refusing NUL) is the handler's; the route answers 404"},
	{"CAP-ETAG-304", "the probe route sends no validators; conditional requests are a handler feature"},
	{"CAP-ETAG-IN-304", "the probe route sends no validators"},
	{"CAP-ETAG-WEAK", "the probe route sends no validators"},
	{"CAP-INM-PRECEDENCE", "the probe route sends no validators"},
	{"CAP-INM-UNQUOTED", "the probe route sends no validators"},
	{"CAP-INM-WILDCARD", "the probe route does not evaluate If-None-Match"},
	{"CAP-LAST-MODIFIED-304", "the probe route sends no Last-Modified"},
}

// nativeWarns are the Warns of the native API with the probe routes below.
var nativeWarns = slices.Concat(commonWarns, []keptWarn{})

// compatWarns are the Warns of riptide.FromHTTP(http.ServeMux).
var compatWarns = slices.Concat(commonWarns, []keptWarn{})

// openFails are Fail verdicts whose fix belongs to another part of riptide
// and is decided there. Each is logged on every run, and the test fails as
// soon as it passes, so the entry is removed with the fix. The goal is an
// empty list.
var openFails = []keptWarn{}

// keptFails are Fail verdicts riptide keeps by decision: the check asks
// for more than the RFC requires, and riptide does what the reference
// servers do. Each is logged on every run, and the test fails as soon as it
// passes, so the list stays exactly what riptide does.
var keptFails = []keptWarn{
	{"MAL-NON-ASCII-URL", "a raw UTF-8 path (`GET /café`, bytes >= 0x80 unencoded) is served, as net/http and quic-go serve it, by one rule on HTTP/1.1, HTTP/2 and HTTP/3 (issue 33 item 7: it was a 400 on HTTP/1.1, RST_STREAM on HTTP/2, an empty 400 on HTTP/3); RFC 9112 §3 makes the 400 a SHOULD, and such a byte can end no token and frame nothing; control bytes, DEL, space and the characters RFC 3986 never allows (`\"<>\\^{|}#`, the backquote) stay refused with 400"},
}

// conformanceRunner keeps the suite to a few seconds: checks run 16 at a
// time and a silent server is given up on after 3s (the checks whose
// passing outcome is a timeout wait that long; less would risk a slow CI
// machine turning an answer into a timeout).
func conformanceRunner(addr string) *probe.Runner {
	return &probe.Runner{Addr: addr, ReadTimeout: 3 * time.Second, CloseWait: 300 * time.Millisecond, Concurrency: 16}
}

func TestConformance(t *testing.T) {
	// The runs mostly wait on timeouts: run them side by side. The h2c
	// runs hold HTTP/1.1 to the same verdicts on a server that also takes
	// HTTP/2 with prior knowledge on the same port (serve.go).
	for _, h2c := range []bool{false, true} {
		name := ""
		if h2c {
			name = "-h2c"
		}
		t.Run("native"+name, func(t *testing.T) {
			t.Parallel()
			runConformance(t, conformanceServer(riptide.HandlerFunc(probeRoutes), h2c), nativeWarns)
		})
		t.Run("compat"+name, func(t *testing.T) {
			t.Parallel()
			runConformance(t, conformanceServer(compatProbeHandler(), h2c), compatWarns)
		})
	}
}

// conformanceServer is the zero-value Server serving h (the defaults are
// what is judged), with only h2c turned on when h2c is set.
func conformanceServer(h riptide.Handler, h2c bool) *riptide.Server {
	srv := &riptide.Server{Handler: h}
	if h2c {
		srv.HTTP2 = &riptide.HTTP2Config{H2C: true}
	}
	return srv
}

// runConformance serves srv, runs every check and compares the verdicts
// with kept.
func runConformance(t *testing.T, srv *riptide.Server, kept []keptWarn) {
	ls := startLive(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results := conformanceRunner(ls.addr).Run(ctx, probe.Checks())
	all, _ := probe.Summarize(results)
	t.Logf("%d checks: %s", len(results), all)

	want := map[string]string{}
	for _, w := range kept {
		want[w.id] = w.reason
	}
	open := map[string]string{}
	for _, f := range openFails {
		open[f.id] = f.reason
	}
	keptFail := map[string]string{}
	for _, f := range keptFails {
		keptFail[f.id] = f.reason
	}
	for _, r := range results {
		if _, ok := open[r.ID]; ok && r.Verdict != probe.Fail {
			t.Errorf("open Fail %s is now %s %s: remove it from openFails", r.ID, r.Verdict, r.Got)
		}
		if _, ok := keptFail[r.ID]; ok && r.Verdict != probe.Fail {
			t.Errorf("kept Fail %s is now %s %s: remove it from keptFails", r.ID, r.Verdict, r.Got)
		}
	}
	warned := map[string]bool{}
	for _, r := range results {
		switch r.Verdict {
		case probe.Fail:
			if why, ok := open[r.ID]; ok {
				t.Logf("OPEN Fail %s: got %s — %s", r.ID, r.Got, why)
				continue
			}
			if why, ok := keptFail[r.ID]; ok {
				t.Logf("kept Fail %s: got %s — %s", r.ID, r.Got, why)
				continue
			}
			t.Errorf("Fail %s (%s %s): got %s; %s\n%s", r.ID, r.Level, r.RFC, r.Got, r.Reason, requestOf(r.ID))
		case probe.Skip:
			t.Errorf("Skip %s: %s", r.ID, r.Reason)
		case probe.Warn:
			warned[r.ID] = true
			if _, ok := want[r.ID]; !ok {
				t.Errorf("new Warn %s (%s): got %s; %s — fix it or add it to the list with the reason it is kept\n%s",
					r.ID, r.Level, r.Got, r.Reason, requestOf(r.ID))
			}
		}
	}
	for _, w := range kept {
		if !warned[w.id] {
			t.Errorf("listed Warn %s no longer warns (%s): remove it from the list", w.id, verdictOf(results, w.id))
		}
	}
}

func requestOf(id string) string {
	for _, c := range probe.Filter(probe.Checks(), "", id) {
		return fmt.Sprintf("    request: %.300q", c.RawRequest())
	}
	return ""
}

func verdictOf(results []probe.Result, id string) string {
	for _, r := range results {
		if r.ID == id {
			return string(r.Verdict) + " " + r.Got
		}
	}
	return "not run"
}

// probeRoutes are the probe routes of probe/doc.go on the native API,
// written as a careful application would: a known path asked with a method
// it does not serve gets 405 with Allow (RFC 9110 §15.5.6), as http.ServeMux
// does for the compat column; OPTIONS * is answered for the server, CONNECT
// is refused (no proxy here), and /echo answers any method, as the cookie
// checks send GET /echo.
func probeRoutes(c *riptide.Ctx) {
	method, path := string(c.Method()), string(c.Path()) // compared, not kept
	switch {
	case path == "/" && (method == "GET" || method == "HEAD"):
		c.SetContentType("text/plain; charset=utf-8")
		c.WriteString("Hello, World!")
	case (path == "/" || string(c.RequestURI()) == "*") && method == "OPTIONS":
		c.SetHeader("Allow", "GET, HEAD, OPTIONS, POST")
		c.SetStatus(204) // COMP-NO-CL-IN-204: no Content-Length on a 204
	case method == "CONNECT":
		methodNotAllowed(c, "GET, HEAD, OPTIONS, POST") // not a proxy
	case path == "/" && method == "POST":
		b, err := c.ReadBody()
		if err != nil {
			c.SetStatus(400)
			return
		}
		c.SetContentType("application/octet-stream")
		c.Write(b)
	case path == "/":
		methodNotAllowed(c, "GET, HEAD, OPTIONS, POST")
	case path == "/echo":
		echoHeaders(c) // any method: the cookie checks send GET /echo
	case path == "/cookie" && (method == "GET" || method == "HEAD"):
		var buf []byte
		for k, v := range c.Cookies() {
			buf = append(buf, k...)
			buf = append(buf, '=')
			buf = append(buf, v...)
			buf = append(buf, '\n')
		}
		c.SetContentType("text/plain; charset=utf-8")
		c.Write(buf)
	case path == "/cookie":
		methodNotAllowed(c, "GET, HEAD")
	default:
		c.SetStatus(404)
		c.SetContentType("text/plain; charset=utf-8")
		c.WriteString("404 page not found\n")
	}
}

func methodNotAllowed(c *riptide.Ctx, allow string) {
	c.SetStatus(405)
	c.SetHeader("Allow", allow)
	c.SetContentType("text/plain; charset=utf-8")
	c.WriteString("Method Not Allowed\n")
}

// echoHeaders writes Host and the other request header fields as
// "Name: Value" lines, names sorted.
func echoHeaders(c *riptide.Ctx) {
	type kv struct{ k, v string }
	var hs []kv
	for _, h := range c.Request().Headers {
		if !strings.EqualFold(string(h.Name), "Host") {
			hs = append(hs, kv{string(h.Name), string(h.Value)})
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].k < hs[j].k })
	buf := append([]byte("Host: "), c.Host()...)
	buf = append(buf, '\n')
	for _, h := range hs {
		buf = append(buf, h.k+": "+h.v+"\n"...)
	}
	c.SetContentType("text/plain; charset=utf-8")
	c.Write(buf)
}

var conformanceServe = flag.String("conformance-serve", "", "serve the probe routes (native, compat, native-h2c or compat-h2c) instead of testing; see TestConformanceServe")

// TestConformanceServe is not a test: with -conformance-serve=native or
// =compat (=native-h2c, =compat-h2c: with h2c on) it serves the probe
// routes of this file, exactly as the CI test does, for cmd/riptide-probe/conformance.sh to put riptide next to other
// servers in docs/conformance.md. It follows the bench servers' launch
// protocol: the address comes as "-addr HOST:PORT" after a "--" (the probe
// appends it), "listening on ADDR" is printed, and SIGTERM stops it.
//
//	go test -c -o riptide.test . && riptide-probe -launch "riptide=./riptide.test -test.run=^TestConformanceServe$ -test.timeout=0 -conformance-serve=native --"
func TestConformanceServe(t *testing.T) {
	var h riptide.Handler
	mode, h2c := strings.CutSuffix(*conformanceServe, "-h2c")
	switch mode {
	case "":
		t.Skip("server for conformance.sh; run with -conformance-serve=native|compat|native-h2c|compat-h2c")
	case "native":
		h = riptide.HandlerFunc(probeRoutes)
	case "compat":
		h = compatProbeHandler()
	default:
		t.Fatalf("-conformance-serve=%q: want native or compat, with or without -h2c", *conformanceServe)
	}
	addr := "127.0.0.1:0"
	args := flag.Args()
	for i, a := range args {
		if (a == "-addr" || a == "--addr") && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := conformanceServer(h, h2c)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Println("listening on " + ln.Addr().String())
	if err := srv.Serve(ln); err != riptide.ErrServerClosed {
		t.Fatal(err)
	}
}

var updateWarnDoc = flag.Bool("update-warn-doc", false, "rewrite testdata/conformance/warns.md from the Warn lists")

const warnDocPath = "testdata/conformance/warns.md"

// TestConformanceWarnListDoc keeps testdata/conformance/warns.md (appended to
// docs/conformance.md by conformance.sh) identical to the lists above.
// Regenerate it with: go test -run TestConformanceWarnListDoc -update-warn-doc .
func TestConformanceWarnListDoc(t *testing.T) {
	t.Parallel()
	doc := renderWarnDoc()
	if *updateWarnDoc {
		if err := os.MkdirAll("testdata/conformance", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(warnDocPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(warnDocPath)
	if err != nil || string(got) != doc {
		t.Errorf("%s is stale (err %v); regenerate it with go test -run TestConformanceWarnListDoc -update-warn-doc .", warnDocPath, err)
		return
	}
	if md, err := os.ReadFile("docs/conformance.md"); err == nil && !strings.HasSuffix(string(md), doc) {
		t.Errorf("docs/conformance.md does not end with the current %s; regenerate it with cmd/riptide-probe/conformance.sh", warnDocPath)
	}
}

// failTable writes a section listing fails, with their reasons under
// column, when there are any; note goes in the heading beside the count.
func failTable(b *strings.Builder, title, note, intro, column string, fails []keptWarn) {
	if len(fails) == 0 {
		return
	}
	if note != "" {
		note = ", " + note
	}
	fmt.Fprintf(b, "\n### %s (%d%s)\n\n%s\n\n| Test ID | %s |\n|---|---|\n", title, len(fails), note, intro, column)
	for _, f := range fails {
		fmt.Fprintf(b, "| `%s` | %s |\n", f.id, strings.ReplaceAll(f.reason, "|", "\\|"))
	}
}

func renderWarnDoc() string {
	var b strings.Builder
	b.WriteString("\n## Warnings riptide keeps, and why\n\n" +
		"`go test -run TestConformance .` runs this suite against riptide in CI and fails on any Fail " +
		"and on any Warn not listed here (the lists live in `conformance_test.go`). " +
		"The routes are those of `probe/doc.go`; on the native API a known path asked with another " +
		"method answers 405 with `Allow`, as `http.ServeMux` does in compat mode.\n\n" +
		"The h2c columns are the same servers with `HTTP2.H2C` on, so that HTTP/2 with prior knowledge " +
		"shares the port (`go test -run TestConformance .` runs all four). Their verdicts are the same; " +
		"four checks pass with another answer: a first line that names no HTTP (`MAL-BINARY-GARBAGE`, " +
		"`MAL-WHITESPACE-ONLY-LINE`, `RFC9112-2.3-HTTP09-REQUEST`) is closed without an answer, as an " +
		"invalid HTTP/2 preface must be (RFC 9113 §3.4, h2spec 3.5), and `MAL-H2-PREFACE` is served as " +
		"HTTP/2. A first line that names HTTP but is no HTTP/1.x request line gets the same 400 or 505 " +
		"with h2c on and off (docs/http2.md).\n")
	for _, l := range []struct {
		name  string
		warns []keptWarn
	}{{"riptide native", nativeWarns}, {"riptide compat", compatWarns}} {
		fmt.Fprintf(&b, "\n### %s (%d)\n\n", l.name, len(l.warns))
		if len(l.warns) == 0 {
			b.WriteString("None.\n")
			continue
		}
		b.WriteString("| Test ID | Why it is kept |\n|---|---|\n")
		ws := slices.Clone(l.warns)
		slices.SortFunc(ws, func(a, b keptWarn) int { return strings.Compare(a.id, b.id) })
		for _, w := range ws {
			fmt.Fprintf(&b, "| `%s` | %s |\n", w.id, strings.ReplaceAll(w.reason, "|", "\\|"))
		}
	}
	failTable(&b, "Fails riptide keeps", "both APIs", "Checks that ask for more than the RFC requires, where riptide does what net/http does; "+
		"the CI test fails as soon as one passes.", "Why it is kept", keptFails)
	failTable(&b, "Open Fails", "", "Fails whose fix belongs to the HTTP/1.1 codec (package `h1`) and is pending there; "+
		"the CI test logs them and fails as soon as one passes, so the entry goes with the fix.", "Cause and fix", openFails)
	return b.String()
}
