package h1

import (
	"strings"
	"testing"
)

func TestResponse(t *testing.T) {
	type want struct {
		status  int
		reason  string
		minor   int
		cl      int64
		chunked bool
		close   bool
		mode    BodyMode // for a non-HEAD request
	}
	for _, c := range []struct {
		rule string
		in   string
		err  *Error
		want want
	}{
		{rule: "RFC 9112 §4: status-line", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
			want: want{200, "OK", 1, 5, false, false, BodyLength}},
		{rule: "RFC 9112 §4: reason phrase with spaces and obs-text", in: "HTTP/1.1 404 Not \xe9 Found\r\nContent-Length: 0\r\n\r\n",
			want: want{404, "Not \xe9 Found", 1, 0, false, false, BodyNone}},
		{rule: "RFC 9112 §4: empty reason phrase", in: "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
			want: want{200, "", 1, 0, false, false, BodyNone}},
		{rule: "RFC 9112 §4: missing SP and reason tolerated", in: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
			want: want{200, "", 1, 0, false, false, BodyNone}},
		{rule: "RFC 9112 §6.3: chunked response", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
			want: want{200, "OK", 1, -1, true, false, BodyChunked}},
		{rule: "RFC 9112 §6.3: no length means until close", in: "HTTP/1.1 200 OK\r\n\r\n",
			want: want{200, "OK", 1, -1, false, false, BodyUntilClose}},
		{rule: "RFC 9112 §6.3: coding other than chunked last means until close", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
			want: want{200, "OK", 1, -1, false, false, BodyUntilClose}},
		{rule: "RFC 9112 §6.3: TE overrides CL, and the connection is not reused", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
			want: want{200, "OK", 1, -1, true, true, BodyChunked}},
		{rule: "RFC 9112 §6.3: 204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n",
			want: want{204, "No Content", 1, -1, false, false, BodyNone}},
		{rule: "RFC 9112 §6.3: 304 has no body whatever its Content-Length", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
			want: want{304, "Not Modified", 1, 10, false, false, BodyNone}},
		{rule: "RFC 9112 §6.3: 1xx has no body", in: "HTTP/1.1 100 Continue\r\n\r\n",
			want: want{100, "Continue", 1, -1, false, false, BodyNone}},
		{rule: "RFC 9112 §6.3: 101 has no body", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
			want: want{101, "Switching Protocols", 1, -1, false, false, BodyNone}},
		{rule: "RFC 9112 §9.3: HTTP/1.0 closes by default", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
			want: want{200, "OK", 0, 0, false, true, BodyNone}},
		{rule: "RFC 9112 §9.3: HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
			want: want{200, "OK", 0, 0, false, false, BodyNone}},
		{rule: "RFC 9112 §9.6: Connection: close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n",
			want: want{200, "OK", 1, 1, false, true, BodyLength}},
		{rule: "RFC 9112 §2.3: higher 1.x minor version is accepted", in: "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n",
			want: want{200, "OK", 2, 0, false, false, BodyNone}},
		{rule: "RFC 9112 §6.1: Transfer-Encoding on HTTP/1.0 is faulty framing", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", err: ErrTEOnHTTP10},
		{rule: "RFC 9110 §8.6: differing Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", err: ErrDupContentLength},
		{rule: "RFC 9110 §8.6: bad Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9112 §6.1: chunked twice", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", err: ErrChunkedNotFinal},
		{rule: "RFC 9112 §4: status is three digits", in: "HTTP/1.1 20 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: status is three digits, not four", in: "HTTP/1.1 2000 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9110 §15: status below 100", in: "HTTP/1.1 099 X\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: non-digit status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: HTTP/2.0 status line", in: "HTTP/2.0 200 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: lower-case protocol", in: "http/1.1 200 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: control byte in reason", in: "HTTP/1.1 200 O\x01K\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §4: tab instead of SP", in: "HTTP/1.1\t200 OK\r\n\r\n", err: ErrBadStatusLine},
		{rule: "RFC 9112 §2.2: bare LF", in: "HTTP/1.1 200 OK\nContent-Length: 0\n\n", err: ErrBadLineEnding},
		{rule: "RFC 9112 §5.2: obs-fold", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", err: ErrObsFold},
		{rule: "RFC 9112 §5.1: space before colon", in: "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", err: ErrSpaceBeforeColon},
	} {
		t.Run(c.rule, func(t *testing.T) {
			var r Response
			n, err := r.Parse([]byte(c.in), nil)
			if c.err != nil {
				if err != c.err {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil || n != len(c.in) {
				t.Fatalf("n=%d err=%v", n, err)
			}
			w := c.want
			got := want{r.Status, string(r.Reason), r.Minor, r.ContentLength, r.Chunked, r.Close, r.BodyMode(false)}
			if got != w {
				t.Errorf("got %+v\nwant %+v", got, w)
			}
			if m := r.BodyMode(true); m != BodyNone {
				t.Errorf("BodyMode(HEAD) = %v, want BodyNone (RFC 9112 §6.3)", m)
			}
		})
	}
}

func TestResponseLimits(t *testing.T) {
	lim := &Limits{MaxRequestLine: 32}
	line := "HTTP/1.1 200 " + strings.Repeat("a", 32) + "\r\n\r\n"
	var r Response
	if _, err := r.Parse([]byte(line), lim); err != ErrHeaderTooLarge {
		t.Errorf("complete long status line: %v", err)
	}
	if _, err := r.Parse([]byte(line[:40]), lim); err != ErrHeaderTooLarge {
		t.Errorf("incomplete long status line: %v", err)
	}
}

func TestResponseKnownAndGet(t *testing.T) {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n")
	for i := 0; i < 260; i++ {
		b.WriteString("X: y\r\n")
	}
	b.WriteString("Set-Cookie: a=1\r\nContent-Length: 0\r\n\r\n")
	var r Response
	if _, err := r.Parse([]byte(b.String()), &Limits{MaxHeaders: 300}); err != nil {
		t.Fatal(err)
	}
	eq(t, "Known(SetCookie) past index 255", r.Known(HeaderSetCookie), "a=1")
	eq(t, "Get", r.Get("set-cookie"), "a=1")
	if r.Get("Nope") != nil || r.Known(HeaderETag) != nil {
		t.Error("absent header found")
	}
}

// TestResponseTrickle parses responses fed one byte at a time.
func TestResponseTrickle(t *testing.T) {
	for _, in := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\n",
		"\r\nHTTP/1.0 304 Not Modified\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
	} {
		var r Response
		var buf []byte
		for i := 0; i < len(in); i++ {
			buf = append(buf, in[i])
			n, err := r.Parse(buf, nil)
			if i < len(in)-1 {
				if err != ErrNeedMore {
					t.Fatalf("%q prefix %d: %v", in, i+1, err)
				}
				continue
			}
			if err != nil || n != len(in) {
				t.Fatalf("%q: n=%d err=%v", in, n, err)
			}
		}
	}
	// A Reset Response parses a shorter buffer from its start.
	var r Response
	r.Parse([]byte("HTTP/1.1 200 OK\r\nServer: a long value here\r\n"), nil)
	r.Reset()
	if n, err := r.Parse([]byte("HTTP/1.1 204 \r\n\r\n"), nil); err != nil || n != 17 {
		t.Fatalf("after Reset: n=%d err=%v", n, err)
	}
}

// TestResponseCodingAndUpgrade: UnknownCoding flags a transfer coding the
// codec does not undo; Upgrade needs both an Upgrade field and "upgrade" in
// Connection.
func TestResponseCodingAndUpgrade(t *testing.T) {
	for _, tc := range []struct {
		head                   string
		unknownCoding, upgrade bool
	}{
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", true, false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", true, false},
		{"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", false, true},
		{"HTTP/1.1 101 Switching Protocols\r\nConnection: keep-alive, upgrade\r\nUpgrade: echo\r\n\r\n", false, true},
		{"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", false, false},
		{"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n", false, false},
	} {
		var r Response
		r.Reset()
		if _, err := r.Parse([]byte(tc.head), nil); err != nil {
			t.Fatalf("%q: %v", tc.head, err)
		}
		if r.UnknownCoding != tc.unknownCoding || r.Upgrade != tc.upgrade {
			t.Errorf("%q: UnknownCoding %v, Upgrade %v; want %v, %v", tc.head, r.UnknownCoding, r.Upgrade, tc.unknownCoding, tc.upgrade)
		}
		r.Reset()
		if r.UnknownCoding || r.Upgrade {
			t.Errorf("%q: Reset kept UnknownCoding/Upgrade", tc.head)
		}
	}
}

func TestBodyAllowed(t *testing.T) {
	for _, c := range []struct {
		status int
		want   bool
		rule   string
	}{
		{100, false, "RFC 9110 §15.2: 1xx has no content"},
		{101, false, "RFC 9110 §15.2: 1xx has no content"},
		{199, false, "RFC 9110 §15.2: 1xx has no content"},
		{200, true, "RFC 9110 §6.4.1: other statuses may have content"},
		{204, false, "RFC 9110 §15.3.5: 204 has no content"},
		{205, true, "RFC 9110 §15.3.6: 205 is framed as usual"},
		{304, false, "RFC 9110 §15.4.5: 304 has no content"},
		{404, true, "RFC 9110 §6.4.1: other statuses may have content"},
	} {
		if got := BodyAllowed(c.status); got != c.want {
			t.Errorf("%s: BodyAllowed(%d) = %v", c.rule, c.status, got)
		}
	}
}
