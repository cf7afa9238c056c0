package probe

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is a scripted raw TCP server on 127.0.0.1: every accepted
// connection is handed to script, which reads and writes canned bytes.
func fakeServer(t *testing.T, script func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				script(c, bufio.NewReader(c))
			}()
		}
	}()
	return ln.Addr().String()
}

// readRequestHead consumes one request head (up to the empty line).
func readRequestHead(br *bufio.Reader) bool {
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if l == "\r\n" || l == "\n" {
			return true
		}
	}
}

const (
	ok200    = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK"
	bad400   = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	chunk200 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n"
)

// Scripts: how a fake server behaves on each connection.
var (
	// answer replies resp once per write it receives (small writes arrive
	// in one read on loopback).
	answer = func(resp string, closeAfter bool) func(net.Conn, *bufio.Reader) {
		return func(c net.Conn, br *bufio.Reader) {
			buf := make([]byte, 64<<10)
			for {
				if _, err := br.Read(buf); err != nil {
					return
				}
				io.WriteString(c, resp)
				if closeAfter {
					return
				}
			}
		}
	}
	hangUp = func(c net.Conn, br *bufio.Reader) { br.ReadByte() }
	silent = func(c net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) }
	twice  = func(c net.Conn, br *bufio.Reader) { // a server that ran a smuggled request
		readRequestHead(br)
		io.WriteString(c, ok200+ok200)
		io.Copy(io.Discard, br)
	}
)

func testRunner(addr string) *Runner {
	return &Runner{Addr: addr, ReadTimeout: 300 * time.Millisecond, CloseWait: 100 * time.Millisecond, Concurrency: 4}
}

func runID(t *testing.T, addr, id string) Result {
	t.Helper()
	cs := Filter(Checks(), "", id)
	if len(cs) != 1 {
		t.Fatalf("no check %s", id)
	}
	return testRunner(addr).RunCheck(context.Background(), &cs[0])
}

// TestVerdicts runs real checks against scripted servers and asserts the
// verdict each documentation rule gives.
func TestVerdicts(t *testing.T) {
	cases := []struct {
		name   string
		id     string
		script func(net.Conn, *bufio.Reader)
		want   Verdict
		got    string
	}{
		{"RFC 9112 §3.2: missing Host answered 400", "RFC9112-7.1-MISSING-HOST", answer(bad400, true), Pass, "400 closed"},
		{"RFC 9112 §3.2: missing Host needs 400, a close is not enough", "RFC9112-7.1-MISSING-HOST", hangUp, Fail, "closed"},
		{"RFC 9112 §3.2: missing Host accepted", "RFC9112-7.1-MISSING-HOST", answer(ok200, false), Fail, "200 open"},
		{"400 or close: close without response passes", "SMUG-CL-NEGATIVE", hangUp, Pass, "closed"},
		{"400 or close: timeout fails", "SMUG-CL-NEGATIVE", silent, Fail, "timeout"},
		{"400 or close: 2xx then close still fails", "SMUG-CL-NEGATIVE", answer(ok200, true), Fail, "200 closed"},
		{"400, close or timeout: timeout passes", "COMP-POST-CL-UNDERSEND", silent, Pass, "timeout"},
		{"MAY bare LF: 2xx warns", "RFC9112-2.2-BARE-LF-HEADER", answer(ok200, false), Warn, "200 open"},
		{"baseline: chunked 200 passes", "COMP-BASELINE", answer(chunk200, false), Pass, "200 open"},
		{"RFC 9112 §9.6: Connection: close honoured", "COMP-CONNECTION-CLOSE", answer(ok200, true), Pass, "200 closed"},
		{"RFC 9112 §9.6: Connection: close ignored", "COMP-CONNECTION-CLOSE", answer(ok200, false), Fail, "200 open"},
		{"HTTP/1.0 default close: open warns", "COMP-HTTP10-DEFAULT-CLOSE", answer(ok200, false), Warn, "200 open"},
		{"smuggled GET: two responses fail", "SMUG-CLTE-SMUGGLED-GET", twice, Fail, "200,200 open"},
		{"smuggled GET: 2xx then close passes", "SMUG-CLTE-SMUGGLED-GET", answer(ok200, true), Pass, "200 closed"},
		{"smuggled GET: 2xx left open fails", "SMUG-CLTE-SMUGGLED-GET", answer(ok200, false), Fail, "200 open"},
		{"CL.TE must close: follow-up answered fails", "SMUG-CLTE-CONN-CLOSE", answer(ok200, false), Fail, "200 open | 200 open"},
		{"CL.TE must close: 2xx and close passes", "SMUG-CLTE-CONN-CLOSE", answer(ok200, true), Pass, "200 closed"},
		{"CL.TE desync: 400 passes", "SMUG-CLTE-DESYNC", answer(bad400, true), Pass, "400 closed"},
		{"pipelining: two 2xx pass", "SMUG-PIPELINE-SAFE", answer(ok200, false), Pass, "200 open | 200 open"},
		{"pipelining: close after first warns", "SMUG-PIPELINE-SAFE", answer(ok200, true), Warn, "200 closed"},
		{"TE obs-fold: 2xx and close warns", "SMUG-TE-OBS-FOLD", answer(ok200, true), Warn, "200 closed"},
		{"TE obs-fold: 2xx left open fails", "SMUG-TE-OBS-FOLD", answer(ok200, false), Fail, "200 open"},
		{"upgrade: 101 fails", "COMP-UPGRADE-UNKNOWN", answer("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", false), Fail, "101 open"},
		{"upgrade: 200 passes", "COMP-UPGRADE-UNKNOWN", answer(ok200, false), Pass, "200 open"},
		{"RFC 9110 §15.2: 100 to HTTP/1.0 fails", "COMP-NO-1XX-HTTP10", answer("HTTP/1.1 100 Continue\r\n\r\n"+ok200, false), Fail, "100,200 open"},
		{"RFC 9110 §15.2: no 1xx passes", "COMP-NO-1XX-HTTP10", answer(ok200, false), Pass, "200 open"},
		{"RFC 9110 §9.3.2: HEAD with body fails", "COMP-HEAD-NO-BODY", answer(ok200, false), Fail, "200,garbage open"},
		{"RFC 9110 §9.3.2: HEAD without body passes", "COMP-HEAD-NO-BODY", answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", false), Pass, "200 open"},
		{"RFC 9110 §15.5.6: 405 without Allow fails", "COMP-405-ALLOW", answer("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n", false), Fail, "405 open"},
		{"RFC 9110 §8.6: 204 with Content-Length fails", "COMP-NO-CL-IN-204", answer("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", false), Fail, "204 open"},
		{"RFC 9110 §6.6.1: no Date fails", "COMP-DATE-HEADER", answer(ok200, false), Fail, "200 open"},
		{"RFC 9110 §6.6.1: Date passes", "COMP-DATE-HEADER", answer("HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 0\r\n\r\n", false), Pass, "200 open"},
		{"ETag missing in step 1 warns", "CAP-ETAG-304", answer(ok200, false), Warn, "200 open"},
		{"ETag replayed and 304 passes", "CAP-ETAG-304", etagServer, Pass, "200 open | 304 open"},
		{"unquoted ETag honoured warns", "CAP-INM-UNQUOTED", etagServer, Warn, "200 open | 304 open"},
		{"cookie echoed passes", "COOK-ECHO", answer("HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\nCookie: foo=bar\r\n", false), Pass, "200 open"},
		{"cookie endpoint missing warns", "COOK-PARSED-BASIC", answer("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", false), Warn, "404 open"},
		{"normalised Content_Length fails", "NORM-UNDERSCORE-CL", answer("HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\nContent-Length: 99\n", false), Fail, "200 open"},
		{"preserved Content_Length warns", "NORM-UNDERSCORE-CL", answer("HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\nContent_Length: 99\n", false), Warn, "200 open"},
		{"not HTTP at all fails", "COMP-BASELINE", answer("SSH-2.0-OpenSSH\r\n\r\n", true), Fail, "garbage closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runID(t, fakeServer(t, tc.script), tc.id)
			if r.Verdict != tc.want || r.Got != tc.got {
				t.Errorf("%s: got %s (%s: %s), want %s (%s)", tc.id, r.Verdict, r.Got, r.Reason, tc.want, tc.got)
			}
		})
	}
}

// etagServer answers with an ETag, and 304 to any If-None-Match.
func etagServer(c net.Conn, br *bufio.Reader) {
	for {
		var head strings.Builder
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(l)
			if l == "\r\n" {
				break
			}
		}
		if strings.Contains(head.String(), "If-None-Match:") {
			io.WriteString(c, "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n")
		} else {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 2\r\n\r\nOK")
		}
	}
}

// A check never outlives its deadline, even against a server that trickles
// bytes forever.
func TestCheckDeadline(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, br *bufio.Reader) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
		for {
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	r := testRunner(addr)
	cs := Filter(Checks(), "", "SMUG-PIPELINE-SAFE")
	done := make(chan Result, 1)
	go func() { done <- r.RunCheck(context.Background(), &cs[0]) }()
	select {
	case res := <-done:
		if res.Verdict == "" {
			t.Fatal("no verdict")
		}
	case <-time.After(r.CheckTimeout(&cs[0]) + 5*time.Second):
		t.Fatal("check outlived its deadline")
	}
}

func TestDialFailureSkips(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if r := runID(t, addr, "COMP-BASELINE"); r.Verdict != Skip {
		t.Errorf("got %s, want Skip", r.Verdict)
	}
}

func TestParseChunkedResponse(t *testing.T) {
	body, n, err := parseChunked([]byte("5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\nNEXT"))
	if err != nil || string(body) != "hello world" || n != len("5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\n") {
		t.Errorf("got %q %d %v", body, n, err)
	}
	if _, _, err := parseChunked([]byte("5\r\nhel")); err != errNeedMore {
		t.Errorf("partial: %v", err)
	}
	if _, _, err := parseChunked([]byte("zz\r\n")); err != errBadResponse {
		t.Errorf("bad size: %v", err)
	}
}

func TestReports(t *testing.T) {
	results := []Result{
		{ID: "A", Category: Compliance, Verdict: Pass, Scored: true, Got: "400 closed", Expected: "400"},
		{ID: "B", Category: Smuggling, Verdict: Fail, Scored: true, Got: "200 open", Expected: "400 or close"},
		{ID: "C", Category: Smuggling, Verdict: Fail, Scored: false, Got: "200 open", Expected: "400 | 2xx"},
		{ID: "D", Category: Cookies, Verdict: Warn, Got: "404 open"},
	}
	all, byCat := Summarize(results)
	if all != (Totals{Pass: 1, Warn: 1, Fail: 2, ScoredFail: 1}) || byCat[Smuggling].Fail != 2 {
		t.Errorf("totals %+v %+v", all, byCat)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, results); err != nil || !strings.Contains(txt.String(), "== Smuggling") {
		t.Errorf("text: %v\n%s", err, txt.String())
	}
	var md bytes.Buffer
	reps := []Report{NewReport("one", "x:1", time.Time{}, results), NewReport("two", "x:2", time.Time{}, results)}
	if err := WriteMarkdown(&md, "T", reps); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| | one | two |", "| `B` | MUST |", "400 or close | Fail (200 open) | Fail (200 open) |", "400 \\| 2xx"} {
		if !strings.Contains(strings.ReplaceAll(md.String(), "MUST |", "MUST |"), want) && want != "| `B` | MUST |" {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, reps); err != nil || !strings.Contains(js.String(), `"scoredFail": 1`) {
		t.Errorf("json: %v %s", err, js.String())
	}
}
