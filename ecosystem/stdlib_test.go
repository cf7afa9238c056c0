package ecosystem

import (
	"errors"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"
	"testing"
	"time"
)

func TestPprof(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, mux)
		c := client(t)
		res := do(t, c, "GET", base+"/debug/pprof/", "")
		if res.status != 200 || !strings.Contains(res.body, "goroutine") {
			t.Errorf("index: %d %.80q", res.status, res.body)
		}
		res = do(t, c, "GET", base+"/debug/pprof/goroutine?debug=2", "")
		if res.status != 200 || !strings.Contains(res.body, "goroutine ") {
			t.Errorf("goroutine dump: %d %.80q", res.status, res.body)
		}
		res = do(t, c, "GET", base+"/debug/pprof/heap", "")
		if res.status != 200 || res.header.Get("Content-Type") != "application/octet-stream" || len(res.body) == 0 {
			t.Errorf("heap profile: %d %q, %d bytes", res.status, res.header.Get("Content-Type"), len(res.body))
		}
		res = do(t, c, "GET", base+"/debug/pprof/cmdline", "")
		if res.status != 200 || !strings.Contains(res.body, ".test") {
			t.Errorf("cmdline: %d %q", res.status, res.body)
		}
		res = do(t, c, "POST", base+"/debug/pprof/symbol", "0x0")
		if res.status != 200 || !strings.Contains(res.body, "num_symbols") {
			t.Errorf("symbol: %d %q", res.status, res.body)
		}
		res = do(t, c, "GET", base+"/debug/pprof/profile?seconds=1", "")
		if res.status != 200 || len(res.body) == 0 {
			t.Errorf("cpu profile: %d, %d bytes", res.status, len(res.body))
		}
		res = do(t, c, "GET", base+"/debug/pprof/nosuch", "")
		if res.status != 404 {
			t.Errorf("unknown profile: %d", res.status)
		}
	})
}

func TestMaxBytesReader(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 16)
		b, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "too large: limit "+itoa(mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	})
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, h)
		c := client(t)
		do(t, c, "POST", base, "sixteen bytes!!!").expect(t, 200, "sixteen bytes!!!")
		do(t, c, "POST", base, strings.Repeat("x", 1000)).expect(t, 413, "too large: limit 16\n")
		// Chunked bodies are limited the same way.
		req, _ := http.NewRequest("POST", base, io.MultiReader(strings.NewReader(strings.Repeat("y", 100))))
		req.ContentLength = -1
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 413 || string(b) != "too large: limit 16\n" {
			t.Errorf("chunked: %d %q", res.StatusCode, b)
		}
		// The server still serves afterwards.
		do(t, c, "POST", base, "ok").expect(t, 200, "ok")
	})
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestTimeoutHandler(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	inner := http.NewServeMux()
	inner.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Inner", "1")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "fast")
	})
	inner.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
		// TimeoutHandler discards this (or fails it with ErrHandlerTimeout,
		// depending on which of its goroutines gets there first).
		io.WriteString(w, "late")
	})
	h := http.TimeoutHandler(inner, 100*time.Millisecond, "timed out")
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, h)
		c := client(t)
		res := do(t, c, "GET", base+"/fast", "")
		res.expect(t, 202, "fast")
		res.expectHeader(t, "X-Inner", "1")
		do(t, c, "GET", base+"/slow", "").expect(t, 503, "timed out")
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Error("the inner handler's context was not cancelled")
		}
	})
}
