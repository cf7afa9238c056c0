package http3

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestCompatLateWriteH3 is the root package's TestCompatLateWrite over
// HTTP/3: a goroutine left by a compat handler (/late) uses the
// ResponseWriter after ServeHTTP returned, while the next stream of the
// connection (/next, which releases it, writes and flushes meanwhile, and
// waits for it) is being answered; every late call gets riptide.ErrHandlerReturned, and the next
// response holds none of its bytes.
func TestCompatLateWriteH3(t *testing.T) {
	var mu sync.Mutex
	var fails []string
	fail := func(format string, args ...any) {
		mu.Lock()
		fails = append(fails, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	type job struct{ run, done chan struct{} }
	parked := make(chan job, 64)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			j := job{make(chan struct{}), make(chan struct{})}
			go func() {
				defer close(j.done)
				<-j.run
				w.Header().Set("X-Late", "LATE")
				w.WriteHeader(299)
				for what, err := range map[string]error{
					"Write":       second(w.Write([]byte("LATE-WRITE"))),
					"WriteString": second(io.WriteString(w, "LATE-STRING")),
					"ReadFrom":    second(w.(io.ReaderFrom).ReadFrom(strings.NewReader("LATE-READFROM"))),
					"Flush":       http.NewResponseController(w).Flush(),
					"Deadline":    http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second)),
				} {
					if !errors.Is(err, riptide.ErrHandlerReturned) {
						fail("late %s: error %v, want ErrHandlerReturned", what, err)
					}
				}
			}()
			parked <- j
			return
		}
		select {
		case j := <-parked:
			close(j.run) // the late calls run while this response is written
			io.WriteString(w, "next-")
			w.(http.Flusher).Flush()
			<-j.done
		case <-time.After(20 * time.Second):
			fail("no late goroutine parked")
		}
		io.WriteString(w, "body")
	})
	srv := &riptide.Server{Handler: riptide.FromHTTP(h)}
	addr, _ := startServe(t, srv, nil)
	cl := h3Client(t)
	get := func(path string) (*http.Response, string) {
		res, err := cl.Get("https://" + addr + path)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return nil, ""
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Errorf("GET %s: body: %v", path, err)
		}
		return res, string(b)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for i := range 5 {
				if res, body := get("/late"); res == nil || res.StatusCode != 200 || body != "" {
					t.Errorf("round %d: /late answered %q, want 200 and no body", i, body)
					return
				}
				res, body := get("/next")
				if res == nil {
					return
				}
				if res.ProtoMajor != 3 || res.StatusCode != 200 || body != "next-body" || res.Header.Get("X-Late") != "" {
					t.Errorf("round %d: the next response is %s %d, header %v, body %q; want HTTP/3 200 and next-body alone",
						i, res.Proto, res.StatusCode, res.Header, body)
				}
			}
		})
	}
	wg.Wait()
	for _, f := range fails {
		t.Error(f)
	}
}

// second returns the second of two results.
func second[T any](_ T, err error) error { return err }
