package riptide_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// startRiptideTarget serves h on a riptide target (h2c or TLS) for the
// test's life.
func startRiptideTarget(t *testing.T, name string, h riptide.Handler, useTLS bool) *h2Instance {
	target := h2Target{name: name, serve: func(t testing.TB, tc *tls.Config, _ *h2App) string {
		return serveRiptideHandler(t, tc, h)
	}}
	return startH2(t, target, useTLS)
}

// getBody GETs url and reads the whole body.
func getBody(c *http.Client, url string) (*http.Response, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// nativeStreamHandler serves the routes of TestH2NativeStream.
func nativeStreamHandler() riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		switch string(c.Path()) {
		case "/declared": // issue 18 item 2: a declared length is always sent
			n, _ := strconv.Atoi(string(c.QueryArg("n")))
			c.SetContentLength(int64(n))
			chunk := strings.Repeat("x", 1000)
			for n > 0 {
				k := min(n, len(chunk))
				c.WriteString(chunk[:k])
				n -= k
				if c.QueryArg("flush") != nil {
					c.Flush()
				}
			}
		case "/framing": // issue 18 item 3: no Transfer-Encoding on HTTP/2
			b, err := c.ReadBody()
			c.WriteString(string(c.Header("Transfer-Encoding")) + "|" + strconv.FormatInt(c.ContentLength(), 10) +
				"|" + strconv.FormatBool(c.Request().Chunked) + "|" + strconv.Itoa(len(b)) + "|" + strconv.FormatBool(err == nil))
		case "/trailers":
			_, err := c.ReadBody()
			var got []string
			for _, f := range c.Trailers() {
				got = append(got, string(f.Name)+"="+string(f.Value))
			}
			c.WriteString(strings.Join(got, ",") + "|" + strconv.FormatBool(err == nil))
		case "/order":
			var names []string
			for _, f := range c.Request().Headers {
				names = append(names, string(f.Name))
			}
			c.WriteString(strings.Join(names, ","))
		case "/unread": // issue 14 item 9: answered without reading the body
			c.WriteString("done")
		}
	})
}

// TestH2NativeStream checks the native door over HTTP/2 without the
// HTTP/1.1 text adapter: declared Content-Length always sent (issue 18
// item 2), no Transfer-Encoding for a body of unknown length (item 3),
// request trailers in Ctx.Trailers, header fields in the order sent.
func TestH2NativeStream(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		in := startRiptideTarget(t, "native-stream", nativeStreamHandler(), useTLS)
		t.Run(in.mode(), func(t *testing.T) {
			c := h2Client(t, in)
			for _, q := range []string{"n=4097", "n=10000", "n=16383", "n=10000&flush=1", "n=100000&flush=1"} {
				resp, body, err := getBody(c, in.url("/declared?"+q))
				if err != nil {
					t.Fatal(err)
				}
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(q, "n="), "&flush=1"))
				if resp.ContentLength != int64(n) || len(body) != n || resp.Header.Get("Content-Length") != strconv.Itoa(n) {
					t.Errorf("%s: Content-Length %d (header %q), %d body bytes; want the declared %d",
						q, resp.ContentLength, resp.Header.Get("Content-Length"), len(body), n)
				}
			}
			resp, err := c.Post(in.url("/framing"), "text/plain", io.MultiReader(strings.NewReader(strings.Repeat("y", 5000))))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "|-1|false|5000|true" {
				t.Errorf("unknown-length body: handler saw %q, want no Transfer-Encoding, length -1, not chunked", b)
			}
			req, _ := http.NewRequest("POST", in.url("/trailers"), io.MultiReader(strings.NewReader("abc")))
			req.Trailer = http.Header{"X-Sum": {"42"}}
			resp, err = c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "x-sum=42|true" {
				t.Errorf("request trailers: handler saw %q, want x-sum=42", b)
			}
		})
	}
}

// TestH2NativeHeaderOrder sends fields in a fixed order on a raw
// connection and checks that the handler sees them in that order.
func TestH2NativeHeaderOrder(t *testing.T) {
	t.Parallel()
	in, _ := startRiptideH2(t, nativeStreamHandler(), nil)
	a := newH2Attacker(t, in, 0)
	block := a.RequestBlock("/order",
		hpack.HeaderField{Name: "x-b", Value: "1"},
		hpack.HeaderField{Name: "x-a", Value: "2"},
		hpack.HeaderField{Name: "accept", Value: "*/*"},
		hpack.HeaderField{Name: "x-b", Value: "3"})
	if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	status, body, _ := readH2Response(t, a, 1)
	if status != "200" || body != "x-b,x-a,accept,x-b" {
		t.Errorf("got %s %q, want 200 and the fields in the order sent", status, body)
	}
}

// TestH2NativeUnreadBody checks issue 14 item 9: a handler that answers
// without reading a request body still being sent ends its response at
// once (END_STREAM), not at a timeout. The stream then stays half-closed
// (local), the body discarded, until the client has used up the stream
// window, and is then reset with NO_ERROR (RFC 9113 §8.1; not at once, so
// that the answer to what the client sent meanwhile does not depend on
// timing: see internal/h2 TestStreamStaysHalfClosedAfterResponse).
func TestH2NativeUnreadBody(t *testing.T) {
	t.Parallel()
	const window = 64 << 10
	for name, h := range map[string]riptide.Handler{
		"native": nativeStreamHandler(),
		"compat": riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "done") })),
	} {
		t.Run(name, func(t *testing.T) {
			in, _ := startRiptideH2(t, h, func(s *riptide.Server) {
				s.ReadHeaderTimeout = time.Hour
				s.HTTP2.MaxReceiveBufferPerStream = window
			})
			a := newH2Attacker(t, in, 0)
			block := a.RequestBlock("/unread")
			if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: true}); err != nil {
				t.Fatal(err)
			}
			status, body, rst := readH2Response(t, a, 1)
			if status != "200" || body != "done" {
				t.Errorf("got %s %q, want 200 done", status, body)
			}
			if rst {
				t.Error("RST_STREAM(NO_ERROR) at once after the response, before the client used its stream window")
			}
			_ = a.Conn.SetReadDeadline(time.Now().Add(h2AttackBound))
			chunk := make([]byte, 16<<10)
			for sent := 0; sent < window; sent += len(chunk) {
				if err := a.Fr.WriteData(1, false, chunk); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.NextReset(1); got != "RST_STREAM(NO_ERROR)" {
				t.Errorf("after a stream window of unread body: got %s, want RST_STREAM(NO_ERROR)", got)
			}
		})
	}
}

// readH2Response reads frames of stream id until its response ends, and
// returns the status, the body and whether RST_STREAM(NO_ERROR) followed.
func readH2Response(t *testing.T, a *h2Attacker, id uint32) (status, body string, rst bool) {
	t.Helper()
	_ = a.Conn.SetReadDeadline(time.Now().Add(h2AttackBound))
	var sb strings.Builder
	ended := false
	for {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			if ended {
				return status, sb.String(), rst
			}
			t.Fatalf("reading the response: %v (so far %s %q)", err, status, sb.String())
		}
		if f.Header().StreamID != id {
			continue
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			status = f.PseudoValue("status")
			ended = f.StreamEnded()
		case *http2.DataFrame:
			sb.Write(f.Data())
			ended = f.StreamEnded()
		case *http2.RSTStreamFrame:
			return status, sb.String(), f.ErrCode == http2.ErrCodeNo && ended
		}
		if ended && rst {
			return status, sb.String(), rst
		}
		if ended {
			// Wait briefly for the RST_STREAM that may follow.
			_ = a.Conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		}
	}
}
