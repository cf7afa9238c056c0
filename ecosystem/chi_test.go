package ecosystem

import (
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// chiLog receives middleware.Logger's lines (middleware.DefaultLogger is a
// package variable, so it is set once here, not per test).
var chiLog syncBuffer

func init() {
	middleware.DefaultLogger = middleware.RequestLogger(&middleware.DefaultLogFormatter{
		Logger: log.New(&chiLog, "", 0), NoColor: true,
	})
}

// chiRouter is a chi application using Logger, Recoverer, Compress and
// Timeout unchanged.
func chiRouter() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Logger)
	r.Use(middleware.Recoverer)
	r.Use(middleware.Compress(5, "text/plain"))
	r.Use(middleware.Timeout(200 * time.Millisecond))
	r.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "user "+chi.URLParam(r, "id"))
	})
	r.Get("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("riptide compresses well. ", 2000))
	})
	r.Get("/panic", func(w http.ResponseWriter, r *http.Request) {
		panic("boom")
	})
	r.Get("/slow", func(w http.ResponseWriter, r *http.Request) {
		// Waits for the Timeout middleware's deadline, as a well-behaved
		// slow handler does.
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			io.WriteString(w, "not cancelled")
		}
	})
	r.Post("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.Copy(w, r.Body)
	})
	return r
}

func TestChi(t *testing.T) {
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, chiRouter())
		c := client(t)
		chiLog.Reset()

		do(t, c, "GET", base+"/users/42", "").expect(t, 200, "user 42")
		if !strings.Contains(chiLog.String(), `"GET http://`) || !strings.Contains(chiLog.String(), "/users/42 HTTP/1.1") {
			t.Errorf("Logger did not log the request: %q", chiLog.String())
		}
		do(t, c, "GET", base+"/nope", "").expect(t, 404, "404 page not found\n")
		do(t, c, "POST", base+"/users/42", "").expect(t, 405, "")
		do(t, c, "POST", base+"/echo", "ping").expect(t, 200, "ping")

		// Recoverer turns a panic into a 500 and the server keeps serving.
		do(t, c, "GET", base+"/panic", "").expect(t, 500, "")
		do(t, c, "GET", base+"/users/7", "").expect(t, 200, "user 7")

		// Timeout cancels the request context and answers 504.
		do(t, c, "GET", base+"/slow", "").expect(t, 504, "")

		// Compress gzips when asked.
		res := do(t, c, "GET", base+"/big", "", "Accept-Encoding", "gzip")
		if res.status != 200 || res.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("compressed: got %d, Content-Encoding %q", res.status, res.header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader([]byte(res.body)))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat("riptide compresses well. ", 2000); string(plain) != want {
			t.Errorf("decompressed body: %d bytes, want %d", len(plain), len(want))
		}
		if len(res.body) >= len(plain)/10 {
			t.Errorf("compressed body is %d bytes for %d plain", len(res.body), len(plain))
		}
		// And does not when not asked.
		res = do(t, c, "GET", base+"/big", "")
		if res.header.Get("Content-Encoding") != "" || len(res.body) != 50000 {
			t.Errorf("uncompressed: Content-Encoding %q, %d bytes", res.header.Get("Content-Encoding"), len(res.body))
		}
	})
}
