package riptide_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// headCase is one request of TestRequestHeadContract.
type headCase struct {
	method, target string
	fields         [][2]string
}

// headCases: a short GET, an unknown method with an escaped path, a query
// and a repeated field, and a head larger than an HTTP/2 stream's first
// head buffer (FillRequest grows it).
var headCases = []headCase{
	{"GET", "/", nil},
	{"PROPFIND", "/dav/a%20b?depth=1", [][2]string{{"X-Custom", "one"}, {"Accept", "*/*"}, {"X-Custom", "two"}}},
	{"DELETE", "/big?x=" + strings.Repeat("q", 600), [][2]string{{"X-Big", strings.Repeat("v", 2000)}, {"X-Small", "s"}}},
}

// headSeen is what a handler of TestRequestHeadContract saw.
type headSeen struct {
	head   string // native: the head the fill left
	kept   bool   // native: the request keeps the reqhead contract with it
	method string
	uri    string
	fields map[string][]string // compat: the X- fields
}

// TestRequestHeadContract: every protocol's fill leaves the request head
// contiguous, method first, with every view of the request inside it
// (reqhead.Head.Check): HTTP/1.1 read in place (after empty lines the
// client may send first, and pipelined), h2c and HTTP/3 (in memory)
// copied from the decoded fields. The compat door, which refuses a request
// that breaks the contract, builds each request from that head as the
// client sent it.
func TestRequestHeadContract(t *testing.T) {
	seen := make(chan headSeen, len(headCases)) // pipelined: answered as a batch
	native := riptide.HandlerFunc(func(x *riptide.Ctx) {
		head, kept := riptide.RequestHead(x)
		seen <- headSeen{head: string(head), kept: kept, method: string(x.Method())}
		x.WriteString("ok")
	})
	compat := riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := map[string][]string{}
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-") {
				fields[k] = v
			}
		}
		seen <- headSeen{method: r.Method, uri: r.RequestURI, fields: fields}
		io.WriteString(w, "ok")
	}))
	check := func(t *testing.T, door string, c headCase, s headSeen) {
		t.Helper()
		if door == "native" {
			if !s.kept || !strings.HasPrefix(s.head, c.method) || !strings.Contains(s.head, c.target) || s.method != c.method {
				t.Errorf("%s %s: contract kept %v, head %.40q... (method %q)", c.method, c.target[:min(len(c.target), 20)], s.kept, s.head, s.method)
			}
			return
		}
		want := map[string][]string{}
		for _, f := range c.fields {
			if strings.HasPrefix(f[0], "X-") {
				want[f[0]] = append(want[f[0]], f[1])
			}
		}
		if s.method != c.method || s.uri != c.target || fmt.Sprint(s.fields) != fmt.Sprint(want) {
			t.Errorf("%s %.20s: compat request %s %.20s %.60v", c.method, c.target, s.method, s.uri, s.fields)
		}
	}
	for _, door := range []struct {
		name string
		h    riptide.Handler
	}{{"native", native}, {"compat", compat}} {
		t.Run(door.name+"/HTTP1.1", func(t *testing.T) {
			srv := &riptide.Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler)}
			ts := riptide.ServeTest(t, srv, riptide.TestServeOptions{})
			nc, err := net.Dial("tcp", ts.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(nc)
			// All requests in one write, the first after empty lines: the
			// later ones are pipelined behind it in the read buffer.
			var all strings.Builder
			all.WriteString("\r\n\r\n")
			for _, c := range headCases {
				fmt.Fprintf(&all, "%s %s HTTP/1.1\r\nHost: example.com\r\n", c.method, c.target)
				for _, f := range c.fields {
					fmt.Fprintf(&all, "%s: %s\r\n", f[0], f[1])
				}
				all.WriteString("\r\n")
			}
			if _, err := io.WriteString(nc, all.String()); err != nil {
				t.Fatal(err)
			}
			for _, c := range headCases {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Fatalf("%s: status %d", c.method, res.StatusCode)
				}
				check(t, door.name, c, <-seen)
			}
		})
		t.Run(door.name+"/h2c", func(t *testing.T) {
			srv := &riptide.Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler), HTTP2: &riptide.HTTP2Config{H2C: true}}
			ts := riptide.ServeTest(t, srv, riptide.TestServeOptions{})
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			tr := &http.Transport{Protocols: &p}
			defer tr.CloseIdleConnections()
			headRoundTrips(t, &http.Client{Transport: tr}, "http://"+ts.Addr, 2, func(c headCase) { check(t, door.name, c, <-seen) })
		})
		t.Run(door.name+"/HTTP3", func(t *testing.T) {
			srv := &riptide.Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler)}
			headRoundTrips(t, h3PipeClient(t, srv), "https://example.com", 3, func(c headCase) { check(t, door.name, c, <-seen) })
		})
	}
}

// headRoundTrips sends each of headCases with client to base and calls
// check after each response, which must come over HTTP/major.
func headRoundTrips(t *testing.T, client *http.Client, base string, major int, check func(headCase)) {
	t.Helper()
	for _, c := range headCases {
		req, err := http.NewRequest(c.method, base+c.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.fields {
			req.Header.Add(f[0], f[1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.ProtoMajor != major && major != 3 {
			t.Fatalf("%s: status %d over %s", c.method, res.StatusCode, res.Proto)
		}
		check(c)
	}
}
