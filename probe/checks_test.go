package probe

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// The Http11Probe requirement dashboard counts 215 checks: per suite and per
// requirement level.
func TestSuiteShape(t *testing.T) {
	checks := Checks()
	if len(checks) != 215 {
		t.Fatalf("got %d checks, want 215", len(checks))
	}
	byCat := map[Category]int{}
	byLevel := map[Level]int{}
	seen := map[string]bool{}
	for _, c := range checks {
		if seen[c.ID] {
			t.Errorf("duplicate ID %s", c.ID)
		}
		seen[c.ID] = true
		byCat[c.Category]++
		byLevel[c.Level]++
		if c.Expected == "" || c.Judge == nil || len(c.Steps) == 0 {
			t.Errorf("%s: incomplete check %+v", c.ID, c)
		}
		if c.Level == Unscored && c.Scored {
			t.Errorf("%s: Unscored level but scored", c.ID)
		}
		for i, s := range c.Steps {
			if len(s.Request) == 0 && s.Build == nil && c.ID != "MAL-EMPTY-REQUEST" {
				t.Errorf("%s: step %d sends nothing", c.ID, i)
			}
		}
	}
	wantCat := map[Category]int{Compliance: 76, Smuggling: 87, MalformedInput: 26,
		Normalization: 5, Capabilities: 9, Cookies: 12}
	for k, v := range wantCat {
		if byCat[k] != v {
			t.Errorf("category %s: %d checks, want %d", k, byCat[k], v)
		}
	}
	wantLevel := map[Level]int{Must: 113, Should: 29, May: 10, OughtTo: 1, Unscored: 51, NotApplicable: 11}
	for k, v := range wantLevel {
		if byLevel[k] != v {
			t.Errorf("level %s: %d checks, want %d", k, byLevel[k], v)
		}
	}
}

// data1Differences lists the checks whose raw request differs from the one
// in data1.js, and why; the documentation is followed in each case (see
// DIFFERENCES.md).
var data1Differences = map[string]string{
	"COMP-POST-CL-BODY":        "docs send Host: localhost",
	"COMP-POST-CL-ZERO":        "docs send Host: localhost",
	"COMP-POST-NO-CL-NO-TE":    "docs send Host: localhost",
	"COMP-POST-CL-UNDERSEND":   "docs send Host: localhost",
	"COMP-CHUNKED-BODY":        "docs send Host: localhost",
	"COMP-CHUNKED-MULTI":       "docs send Host: localhost",
	"COMP-CHUNKED-EMPTY":       "docs send Host: localhost",
	"COMP-CHUNKED-NO-FINAL":    "docs send Host: localhost",
	"COMP-GET-WITH-CL-BODY":    "docs send Host: localhost",
	"COMP-CHUNKED-EXTENSION":   "docs send Host: localhost",
	"SMUG-CL-TE-BOTH":          "docs: CL 23 with a 13-byte chunk; data1: CL 6 with an empty chunked body",
	"SMUG-DUPLICATE-CL":        "docs body hello; data1 body helloworld",
	"MAL-CONTROL-CHARS-HEADER": "data1 lost \\x0Bde (a C# \\x escape swallowed the hex letters)",
	"MAL-BINARY-GARBAGE":       "different pseudo-random generator",
}

// TestRawRequestsMatchData1 compares every raw request against the 143 of
// Http11Probe's data1.js (a copy of which is in testdata): equal, or equal
// up to data1's 8192-byte truncation and its '?' for non-ASCII bytes, or a
// listed difference.
func TestRawRequestsMatchData1(t *testing.T) {
	b, err := os.ReadFile("testdata/http11probe/data1_requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]struct {
		RawRequest string `json:"rawRequest"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	if len(data) != 143 {
		t.Fatalf("data1 has %d requests, want 143", len(data))
	}
	byID := map[string]*Check{}
	checks := Checks()
	for i := range checks {
		byID[checks[i].ID] = &checks[i]
	}
	var differ []string
	matched := 0
	for id, d := range data {
		c := byID[id]
		if c == nil {
			t.Errorf("data1 check %s missing from the suite", id)
			continue
		}
		if sameRaw(c.RawRequest(), []byte(d.RawRequest)) {
			matched++
			if why, ok := data1Differences[id]; ok {
				t.Errorf("%s matches data1 but is listed as different (%s)", id, why)
			}
			continue
		}
		differ = append(differ, id)
		if _, ok := data1Differences[id]; !ok {
			t.Errorf("%s differs from data1:\n mine:  %q\n data1: %q", id, clip(string(c.RawRequest()), 300), clip(d.RawRequest, 300))
		}
	}
	sort.Strings(differ)
	if len(differ) != len(data1Differences) {
		t.Errorf("differences %v, listed %d", differ, len(data1Differences))
	}
	t.Logf("%d of %d data1 raw requests match; %d documented differences", matched, len(data), len(differ))
}

// sameRaw compares a raw request with data1's copy, which is cut at 8192
// bytes and shows each non-ASCII byte as '?'.
func sameRaw(mine, theirs []byte) bool {
	if len(theirs) == 8192 && len(mine) > 8192 {
		mine = mine[:8192]
	}
	if len(mine) != len(theirs) {
		return false
	}
	for i := range mine {
		if mine[i] != theirs[i] && !(theirs[i] == '?' && mine[i] >= 0x80) {
			return false
		}
	}
	return true
}

// Generated payloads have the sizes their pages give.
func TestGeneratedPayloads(t *testing.T) {
	raw := func(id string) []byte {
		c := Filter(Checks(), "", id)
		if len(c) != 1 {
			t.Fatalf("no check %s", id)
		}
		return c[0].RawRequest()
	}
	cases := []struct {
		id   string
		want func([]byte) bool
	}{
		{"MAL-LONG-URL", func(b []byte) bool {
			return bytes.Contains(b, []byte("GET /"+strings.Repeat("A", 100_000)+" HTTP/1.1\r\n"))
		}},
		{"MAL-MANY-HEADERS", func(b []byte) bool {
			return bytes.Count(b, []byte("\r\nX-H-")) == 10_000 && bytes.Contains(b, []byte("X-H-9999: value\r\n\r\n"))
		}},
		{"MAL-BINARY-GARBAGE", func(b []byte) bool { return len(b) == 256 }},
		{"MAL-EMPTY-REQUEST", func(b []byte) bool { return len(b) == 0 }},
		{"COOK-MANY-PAIRS", func(b []byte) bool {
			return bytes.Contains(b, []byte("Cookie: k0=v0; k1=v1; ")) && bytes.Contains(b, []byte("; k999=v999\r\n"))
		}},
		{"COOK-OVERSIZED", func(b []byte) bool { return bytes.Contains(b, []byte("big="+strings.Repeat("A", 65_536)+"\r\n")) }},
		{"COMP-LONG-URL-OK", func(b []byte) bool {
			return bytes.HasPrefix(b, []byte("GET /"+strings.Repeat("a", 7900)+" HTTP/1.1\r\n"))
		}},
		{"SMUG-DUPLICATE-CL-SMUGGLED-GET", func(b []byte) bool {
			return bytes.Contains(b, []byte("Content-Length: 4\r\nContent-Length: 44\r\n\r\nPINGGET / HTTP/1.1\r\n"))
		}},
		{"SMUG-TECL-SMUGGLED-GET", func(b []byte) bool {
			return bytes.Contains(b, []byte("Content-Length: 4\r\n\r\n3b\r\nGET / HTTP/1.1\r\n")) &&
				bytes.HasSuffix(b, []byte("Content-Length: 7\r\n\r\n\r\n0\r\n\r\n"))
		}},
		{"SMUG-GET-CL-PREFIX-DESYNC", func(b []byte) bool {
			return bytes.HasPrefix(b, []byte("GET / HTTP/1.1\r\nHost: localhost:8080\r\nContent-Length: 38\r\n\r\nGET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\nGET /"))
		}},
	}
	for _, tc := range cases {
		if !tc.want(raw(tc.id)) {
			t.Errorf("%s: unexpected payload %q", tc.id, clip(string(raw(tc.id)), 200))
		}
	}
}

func TestFilter(t *testing.T) {
	if n := len(Filter(Checks(), "smuggling")); n != 87 {
		t.Errorf("smuggling: %d", n)
	}
	if n := len(Filter(Checks(), "MalformedInput")); n != 26 {
		t.Errorf("MalformedInput: %d", n)
	}
	if n := len(Filter(Checks(), "", "comp-baseline", "SMUG-CL-TE-BOTH")); n != 2 {
		t.Errorf("ids: %d", n)
	}
}
