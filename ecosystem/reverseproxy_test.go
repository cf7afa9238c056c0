package ecosystem

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// proxyBackend is the origin behind the proxy. release gates the second half
// of /stream, so the test proves that the first half was flushed through
// the proxy before the origin finished, with no timing involved.
func proxyBackend(t *testing.T, release chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("backend read: %v", err)
		}
		w.Header().Set("X-Backend", "1")
		fmt.Fprintf(w, "%s %s q=%s xff=%t host=%s body=%s", r.Method, r.URL.Path, r.URL.RawQuery,
			r.Header.Get("X-Forwarded-For") != "", r.Host, b)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum")
		io.WriteString(w, "first|")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "second")
		w.Header().Set("X-Checksum", "abc123")
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusTeapot)
	})
	mux.Handle("/ws", wsEcho(t))
	return mux
}

func newProxy(t *testing.T, backend string) http.Handler {
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p.Transport = tr
	p.ErrorLog = nil
	return p
}

func checkProxy(t *testing.T, proxyURL string, release func()) {
	t.Helper()
	c := client(t)
	res := do(t, c, "POST", proxyURL+"/echo?a=1&b=%20", "payload")
	res.expect(t, 200, "POST /echo q=a=1&b=%20 xff=true host="+strings.TrimPrefix(proxyURL, "http://")+" body=payload")
	res.expectHeader(t, "X-Backend", "1")
	do(t, c, "GET", proxyURL+"/status", "").expect(t, 418, "")

	// Streaming: the first part must reach the client while the origin is
	// still blocked, then the trailer arrives at the end.
	res2, err := c.Get(proxyURL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	br := bufio.NewReader(res2.Body)
	first, err := br.ReadString('|')
	if err != nil || first != "first|" {
		t.Fatalf("first part: %q, %v", first, err)
	}
	release()
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second" {
		t.Errorf("second part: %q, %v", rest, err)
	}
	if got := res2.Trailer.Get("X-Checksum"); got != "abc123" {
		t.Errorf("trailer through proxy: %q", got)
	}

	// Websocket through the proxy: ReverseProxy hijacks the client side.
	wsRoundTrip(t, "ws"+strings.TrimPrefix(proxyURL, "http")+"/ws")
}

func TestReverseProxy(t *testing.T) {
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		t.Run("as-proxy", func(t *testing.T) {
			release := make(chan struct{})
			backend := serveNetHTTP(t, proxyBackend(t, release))
			proxy := serve(t, newProxy(t, backend))
			checkProxy(t, proxy, releaseAtEnd(t, release))
		})
		t.Run("as-backend", func(t *testing.T) {
			release := make(chan struct{})
			backend := serve(t, proxyBackend(t, release))
			proxy := serveNetHTTP(t, newProxy(t, backend))
			checkProxy(t, proxy, releaseAtEnd(t, release))
		})
	})
}

// releaseAtEnd returns a func that closes release, once, and registers it
// as a cleanup: registered after the servers', it runs before them, so a
// failure while the origin blocks on release ends the test instead of
// leaving a server's Close waiting for that handler.
func releaseAtEnd(t *testing.T, release chan struct{}) func() {
	f := sync.OnceFunc(func() { close(release) })
	t.Cleanup(f)
	return f
}
