package ecosystem

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// response is what a test looks at after a round trip.
type response struct {
	status  int
	header  http.Header
	body    string
	trailer http.Header
}

// do sends one request and reads the whole response. hdr is name, value
// pairs.
func do(t *testing.T, c *http.Client, method, url, body string, hdr ...string) response {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rb)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: string(b), trailer: res.Trailer}
}

// expect checks status and body.
func (r response) expect(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Errorf("got %d %q, want %d %q", r.status, r.body, status, body)
	}
}

// expectHeader checks one response header.
func (r response) expectHeader(t *testing.T, name, want string) {
	t.Helper()
	if got := r.header.Get(name); got != want {
		t.Errorf("%s: got %q, want %q", name, got, want)
	}
}

// syncBuffer is a strings.Builder safe for concurrent writers (loggers).
type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sb.Reset()
}
