package serve_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore"
	"github.com/riptide-http/riptide/bench/eventstore/serve"
)

// TestSameSessionEveryServer runs one scripted session (appends, version
// conflicts, reads, gzip, subscriptions, bad tokens, bad JSON, oversized
// bodies) against the five servers over both stores, checks each step's
// expected outcome, and requires every transcript to equal net/http's.
func TestSameSessionEveryServer(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		var want []string
		for _, name := range serve.Names {
			t.Run(store+"/"+name, func(t *testing.T) {
				got := runSession(t, name, store)
				if want == nil {
					want = got
					return
				}
				if len(got) != len(want) {
					t.Fatalf("transcript has %d lines, nethttp's %d", len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("step %d differs from nethttp:\n got %s\nwant %s", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// startServer serves a fresh application with the named server and
// returns its address.
func startServer(t *testing.T, name, store string) string {
	t.Helper()
	e, err := serve.Open(serve.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	run, stop := serve.Servers[name](e)
	done := make(chan struct{})
	go func() { run(ln); close(done) }()
	t.Cleanup(func() {
		e.App.Broker.Close()
		stop()
		ln.Close()
		<-done
		e.Close()
	})
	return ln.Addr().String()
}

// session is one scripted client conversation and its transcript.
type session struct {
	t      *testing.T
	base   string
	client *http.Client
	lines  []string
}

func runSession(t *testing.T, name, store string) []string {
	s := &session{t: t, base: "http://" + startServer(t, name, store),
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}}
	defer s.client.CloseIdleConnections()
	const alpha, beta = "Bearer token-alpha", "Bearer token-beta"

	sub := s.subscribe(alpha, "stream=acct-1&from=0")
	cat := s.subscribe(alpha, "category=acct&from=2")

	s.rpc("append new", alpha, `{"id":1,"method":"append","params":{"stream":"acct-1","type":"Opened","data":{"owner":"ann"},"expected_version":-1}}`,
		200, `"result":{"position":1,"version":0}`)
	s.rpc("append conflict", alpha, `{"id":2,"method":"append","params":{"stream":"acct-1","type":"Opened","data":{},"expected_version":-1}}`,
		200, `"code":-32001`)
	s.rpc("append expected", alpha, `{"id":3,"method":"append","params":{"stream":"acct-1","type":"Deposited","data":{"amount":10},"metadata":{"by":"teller"},"expected_version":0}}`,
		200, `"result":{"position":2,"version":1}`)
	s.rpc("append stale", alpha, `{"id":4,"method":"append","params":{"stream":"acct-1","type":"Deposited","data":{"amount":5},"expected_version":0}}`,
		200, `"code":-32001`)
	s.rpc("append any", alpha, `{"id":5,"method":"append","params":{"stream":"acct-2","type":"Opened","data":{"owner":"bob"}}}`,
		200, `"result":{"position":3,"version":0}`)
	s.rpc("append other category", alpha, `{"id":6,"method":"append","params":{"stream":"user-1","type":"Joined","data":{}}}`,
		200, `"result":{"position":4,"version":0}`)
	s.rpc("append after", alpha, `{"id":7,"method":"append","params":{"stream":"acct-1","type":"Withdrawn","data":{"amount":3},"expected_version":1}}`,
		200, `"result":{"position":5,"version":2}`)
	s.events("stream subscription", sub, 3, `"version":0`, `"version":1`, `"version":2`)
	s.events("category subscription", cat, 3, `"position":2`, `"position":3`, `"position":5`)
	s.events("resumed subscription", s.subscribe(alpha, "stream=acct-1&from=1"), 2, `"version":1`, `"version":2`)

	s.rpc("read stream", alpha, `{"id":8,"method":"read_stream","params":{"stream":"acct-1"}}`, 200, `"type":"Withdrawn"`)
	s.rpc("read stream page", alpha, `{"id":9,"method":"read_stream","params":{"stream":"acct-1","from":1,"limit":1}}`, 200, `"type":"Deposited"`)
	s.rpc("read category", alpha, `{"id":10,"method":"read_category","params":{"category":"acct","from":3}}`, 200, `"position":5`)
	s.rpc("last version", alpha, `{"id":"v","method":"last_version","params":{"stream":"acct-1"}}`, 200, `"result":{"version":2}`)
	s.rpc("last version none", alpha, `{"id":11,"method":"last_version","params":{"stream":"acct-9"}}`, 200, `"result":{"version":-1}`)
	s.rpc("other namespace", beta, `{"id":12,"method":"read_stream","params":{"stream":"acct-1"}}`, 200, `"result":{"events":[]}`)

	for i := range 30 {
		s.rpc("", alpha, fmt.Sprintf(`{"method":"append","params":{"stream":"big-1","type":"Filled","data":{"i":%d,"pad":%q}}}`,
			i, strings.Repeat("x", 200)), 200, `"result"`)
	}
	s.rpc("large read gzipped", alpha, `{"id":13,"method":"read_stream","params":{"stream":"big-1","limit":30}}`, 200, `"version":29`)

	s.rpc("bad token", "Bearer nope", `{"id":14,"method":"last_version","params":{"stream":"acct-1"}}`, 401, `-32000`)
	s.rpc("no token", "", `{"id":15,"method":"last_version","params":{"stream":"acct-1"}}`, 401, `-32000`)
	s.rpc("bad JSON", alpha, `{"id":16,"method":`, 400, `-32700`)
	s.rpc("no method", alpha, `{"id":17}`, 400, `-32600`)
	s.rpc("unknown method", alpha, `{"id":18,"method":"drop_table"}`, 200, `-32601`)
	s.rpc("bad params", alpha, `{"id":19,"method":"append","params":{"stream":"acct-1"}}`, 200, `-32602`)
	s.rpc("oversized body", alpha, `{"id":20,"method":"append","params":{"stream":"acct-1","type":"Big","data":"`+
		strings.Repeat("y", eventstore.MaxBodyBytes)+`"}}`, 413, `request body too large`)
	s.rpc("after oversized", alpha, `{"id":21,"method":"last_version","params":{"stream":"acct-1"}}`, 200, `"result":{"version":2}`)
	s.do("bad subscribe", http.MethodGet, "/subscribe?stream=a&category=b", alpha, "", 400, `-32602`)
	s.do("GET /rpc", http.MethodGet, "/rpc", alpha, "", 405, "")
	return s.lines
}

// rpc posts body to /rpc and records the outcome; wantBody must occur in
// the (decompressed) reply.
func (s *session) rpc(step, auth, body string, wantStatus int, wantBody string) {
	s.do(step, http.MethodPost, "/rpc", auth, body, wantStatus, wantBody)
}

func (s *session) do(step, method, path, auth, body string, wantStatus int, wantBody string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	id := fmt.Sprintf("step-%d", len(s.lines))
	req.Header.Set(eventstore.RequestIDHeader, id)
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s: %v", step, err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	enc := resp.Header.Get("Content-Encoding")
	if enc == "gzip" {
		if r, err = gzip.NewReader(resp.Body); err != nil {
			s.t.Fatalf("%s: %v", step, err)
		}
	}
	got, err := io.ReadAll(r)
	if err != nil {
		s.t.Fatalf("%s: reading body: %v", step, err)
	}
	if resp.StatusCode != wantStatus || !bytes.Contains(got, []byte(wantBody)) {
		s.t.Errorf("%s: got %d %s, want %d and %s", step, resp.StatusCode, got, wantStatus, wantBody)
	}
	if rid := resp.Header.Get(eventstore.RequestIDHeader); rid != id {
		s.t.Errorf("%s: request ID %q, want %q", step, rid, id)
	}
	if step == "large read gzipped" && enc != "gzip" {
		s.t.Errorf("%s: Content-Encoding %q, want gzip", step, enc)
	}
	ctype, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	s.lines = append(s.lines, fmt.Sprintf("%s: %d %s %s %s", step, resp.StatusCode, ctype, enc, timeless(got)))
}

// timeless drops the events' append times, which differ between runs.
func timeless(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return string(body)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "time")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	b, _ := json.Marshal(v)
	return string(b)
}

// subscribe opens an SSE stream; events read from it.
func (s *session) subscribe(auth, query string) *bufio.Reader {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	s.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/subscribe?"+query, nil)
	req.Header.Set("Authorization", auth)
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("subscribe %s: %v", query, err)
	}
	s.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		s.t.Fatalf("subscribe %s: %d %s", query, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewReader(resp.Body)
}

// events reads n events from an SSE stream and requires the i-th data line
// to contain want[i].
func (s *session) events(step string, r *bufio.Reader, n int, want ...string) {
	s.t.Helper()
	for i := range n {
		var id, data string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				s.t.Fatalf("%s: event %d: %v", step, i, err)
			}
			line = strings.TrimSuffix(line, "\n")
			if line == "" && data != "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		if !strings.Contains(data, want[i]) || !strings.Contains(data, `"position":`+id+",") {
			s.t.Errorf("%s: event %d: id %s data %s, want %s", step, i, id, data, want[i])
		}
		s.lines = append(s.lines, fmt.Sprintf("%s %d: id %s %s", step, i, id, timeless([]byte(data))))
	}
}
