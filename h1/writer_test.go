package h1

import (
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStatusLine(t *testing.T) {
	for _, c := range []struct {
		rule string
		code int
		want string
	}{
		{"RFC 9112 §4: 200", 200, "HTTP/1.1 200 OK\r\n"},
		{"RFC 9112 §4: 404", 404, "HTTP/1.1 404 Not Found\r\n"},
		{"RFC 9112 §4: 100", 100, "HTTP/1.1 100 Continue\r\n"},
		{"RFC 9112 §4: 505", 505, "HTTP/1.1 505 HTTP Version Not Supported\r\n"},
		{"RFC 9112 §4: unregistered code has an empty reason, SP kept", 299, "HTTP/1.1 299 \r\n"},
		{"RFC 9110 §15: code below 100 cannot be sent", 99, "HTTP/1.1 500 Internal Server Error\r\n"},
		{"RFC 9110 §15: code above 599 cannot be sent", 600, "HTTP/1.1 500 Internal Server Error\r\n"},
		{"RFC 9110 §15: negative code", -1, "HTTP/1.1 500 Internal Server Error\r\n"},
	} {
		if got := string(AppendStatusLine(nil, c.code)); got != c.want {
			t.Errorf("%s: %q, want %q", c.rule, got, c.want)
		}
	}
	// Every sendable code gives a status line the response parser accepts,
	// with net/http's reason phrase where net/http has one.
	for code := 100; code < 600; code++ {
		line := AppendStatusLine(nil, code)
		var r Response
		if _, err := r.Parse(append(line, "\r\n"...), nil); err != nil || r.Status != code {
			t.Fatalf("%q: %v", line, err)
		}
		if want := http.StatusText(code); want != "" && string(r.Reason) != want {
			t.Errorf("%d: reason %q, net/http says %q", code, r.Reason, want)
		}
	}
}

func TestAppendHeaders(t *testing.T) {
	b := AppendHeader(nil, "Content-Type", "text/plain")
	b = AppendHeader(b, []byte("X-B"), []byte("v"))
	b = AppendContentLength(b, 0)
	b = AppendContentLength(b, 1234567890123)
	want := "Content-Type: text/plain\r\nX-B: v\r\nContent-Length: 0\r\nContent-Length: 1234567890123\r\n"
	if string(b) != want {
		t.Errorf("got %q", b)
	}
	if got := string(AppendRequestLine(nil, "GET", "/x?y")); got != "GET /x?y HTTP/1.1\r\n" {
		t.Errorf("request line %q", got)
	}
}

// TestDate compares AppendHTTPDate with time.Format(http.TimeFormat), the
// IMF-fixdate of RFC 9110 §5.6.7.
func TestDate(t *testing.T) {
	times := []time.Time{
		time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC), // the RFC's example
		time.Date(2000, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 12, 0, 0, 0, time.FixedZone("X", -7*3600)), // converted to GMT
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		times = append(times, time.Unix(rng.Int63n(253402300799), 0))
	}
	for _, tm := range times {
		want := tm.UTC().Format(http.TimeFormat)
		if got := string(AppendHTTPDate(nil, tm)); got != want {
			t.Fatalf("AppendHTTPDate(%v) = %q, want %q", tm, got, want)
		}
		if got := string(AppendDate(nil, tm)); got != "Date: "+want+"\r\n" {
			t.Fatalf("AppendDate(%v) = %q", tm, got)
		}
	}
	if got := string(AppendHTTPDate(nil, time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC))); got != "Sun, 06 Nov 1994 08:49:37 GMT" {
		t.Errorf("RFC 9110 §5.6.7 example: %q", got)
	}
}

// TestWriteResponseHead writes a complete head and parses it back.
func TestWriteResponseHead(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		code int
		body string
	}{{200, "hello"}, {404, ""}, {500, strings.Repeat("e", 1000)}, {204, ""}} {
		b := AppendStatusLine(nil, c.code)
		b = AppendHeader(b, "Content-Type", "text/plain; charset=utf-8")
		b = AppendDate(b, now)
		if c.code != 204 {
			b = AppendContentLength(b, int64(len(c.body)))
		}
		b = append(b, "\r\n"...)
		var r Response
		n, err := r.Parse(b, nil)
		if err != nil || n != len(b) {
			t.Fatalf("%d: %v", c.code, err)
		}
		if r.Status != c.code || string(r.Known(HeaderDate)) != now.Format(http.TimeFormat) {
			t.Errorf("%d: status %d date %q", c.code, r.Status, r.Known(HeaderDate))
		}
		want := BodyLength
		if c.code == 204 || c.body == "" {
			want = BodyNone
		}
		if m := r.BodyMode(false); m != want {
			t.Errorf("%d: BodyMode %v, want %v", c.code, m, want)
		}
		if c.code != 204 && string(r.Known(HeaderContentLength)) != strconv.Itoa(len(c.body)) {
			t.Errorf("%d: Content-Length %q", c.code, r.Known(HeaderContentLength))
		}
	}
}

func TestStatusText(t *testing.T) {
	for code := 0; code < 1000; code++ {
		if got, want := StatusText(code), http.StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, net/http %q", code, got, want)
		}
	}
}
