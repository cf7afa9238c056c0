package riptide

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

type jsonItem struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// TestBindJSON (issue 28, item 9): BindJSON decodes a JSON body and
// answers 415, 413 and 400 itself with a clear message; JSON encodes the
// answer with its Content-Type.
func TestBindJSON(t *testing.T) {
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/small" {
			c.SetBodyLimit(16)
		}
		var in jsonItem
		if c.BindJSON(&in) != nil {
			return
		}
		in.Count++
		c.JSON(201, &in)
	})
	for _, tc := range []struct {
		rule, path, ctype, body string
		code                    int
		want                    string
	}{
		{"valid", "/", "application/json", `{"name":"a","count":1}`, 201, `{"name":"a","count":2}` + "\n"},
		{"with charset, +json type", "/", "application/problem+json; charset=utf-8", `{"name":"b"}`, 201, `{"name":"b","count":1}` + "\n"},
		{"not JSON", "/", "text/plain", `{"name":"a"}`, 415, "Unsupported Media Type: want application/json\n"},
		{"no Content-Type", "/", "", `{"name":"a"}`, 415, "Unsupported Media Type: want application/json\n"},
		{"too large", "/small", "application/json", `{"name":"aaaaaaaaaaaaaaaaaaaa"}`, 413, "Request Entity Too Large\n"},
		{"malformed", "/", "application/json", `{"name":`, 400, "Bad Request: unexpected end of JSON input\n"},
		{"wrong type", "/", "application/json", `{"count":"x"}`, 400, "Bad Request: json: cannot unmarshal string into Go struct field jsonItem.count of type int\n"},
	} {
		req, _ := http.NewRequest("POST", "http://"+addr+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllString(t, res); res.StatusCode != tc.code || got != tc.want {
			t.Errorf("%s: %d %q, want %d %q", tc.rule, res.StatusCode, got, tc.code, tc.want)
		}
		if tc.code == 201 && res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.rule, res.Header.Get("Content-Type"))
		}
	}
}

// TestJSONZeroAllocs: JSON costs nothing per request for a pointer to a
// flat struct, and BindJSON nothing beyond what json.Unmarshal itself
// allocates for the same body.
func TestJSONZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	out := &jsonItem{Name: "Hello, World!", Count: 7}
	var in jsonItem
	_, addr := startServer(t, nil, func(c *Ctx) {
		if c.ContentLength() > 0 {
			if c.BindJSON(&in) != nil {
				return
			}
		}
		c.JSON(200, out)
		c.WriteString("Hello, World!") // what newAllocClient expects
	})
	ac := newAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if a := testing.AllocsPerRun(2000, ac.roundTrip); a != 0 {
		t.Errorf("JSON: %v allocs per request, want 0", a)
	}
	body := `{"name":"x","count":3}`
	raw := []byte(body)
	unmarshal := testing.AllocsPerRun(2000, func() { json.Unmarshal(raw, &in) })
	ac = newAllocClient(t, addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	a := testing.AllocsPerRun(2000, ac.roundTrip)
	t.Logf("BindJSON + JSON: %v allocs per request; json.Unmarshal alone: %v", a, unmarshal)
	if a > unmarshal {
		t.Errorf("BindJSON + JSON: %v allocs per request, json.Unmarshal alone %v", a, unmarshal)
	}
}

// TestDecodedPathAndStrings (issue 28, item 9): DecodedPath decodes
// percent-escapes, without allocating; the String accessors copy.
func TestDecodedPathAndStrings(t *testing.T) {
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/alloc" || string(c.Path()) == "/a%20b%2Fc" && c.Header("X-Alloc") != nil {
			c.DecodedPath()
			c.WriteString("Hello, World!")
			return
		}
		c.SetPathValue("id", []byte("42"))
		fmt.Fprintf(c, "%s|%s|%s|%s|%s", c.DecodedPath(), c.PathValueString("id"), c.QueryArgString("q"),
			c.HeaderString("X-H"), c.CookieString("k"))
	})
	nc, br := dialRaw(t, addr)
	fmt.Fprint(nc, "GET /a%20b%2Fc%C3%A9?q=x+y%21 HTTP/1.1\r\nHost: x\r\nX-H: hv\r\nCookie: k=cv\r\n\r\n")
	if _, got := readResponse(t, br); got != "/a b/cé|42|x y!|hv|cv" {
		t.Errorf("got %q, want %q", got, "/a b/cé|42|x y!|hv|cv")
	}
	if testing.Short() {
		return
	}
	for _, req := range []string{"GET /alloc HTTP/1.1\r\nHost: x\r\n\r\n", "GET /a%20b%2Fc HTTP/1.1\r\nHost: x\r\nX-Alloc: 1\r\n\r\n"} {
		ac := newAllocClient(t, addr, req)
		if a := testing.AllocsPerRun(2000, ac.roundTrip); a != 0 {
			t.Errorf("%q: %v allocs per request, want 0", req, a)
		}
	}
}

// readAllString reads and closes res's body.
func readAllString(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestErrorHandlerDoesNotRecurse: an ErrorHandler whose own JSON fails
// gets a plain-text answer instead of calling itself forever.
func TestErrorHandlerDoesNotRecurse(t *testing.T) {
	t.Parallel()
	srv := &Server{ErrorHandler: func(c *Ctx, code int, msg string) {
		c.JSON(code, func() {}) // a func cannot be encoded: JSON calls Error
	}}
	_, addr := startServer(t, srv, func(c *Ctx) { c.Error(418, "teapot") })
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAllString(t, res); res.StatusCode != 500 || !strings.HasPrefix(body, "Internal Server Error: encoding the response: json: unsupported type") {
		t.Errorf("%d %q, want the plain 500 of the failed encoding", res.StatusCode, body)
	}
}
