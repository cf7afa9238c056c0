package client

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// rawServer is a scripted HTTP/1.1 server on a raw socket. It parses each
// request with h1 and lets handle write whatever bytes it likes; handle
// returns false to close the connection. Its read loop works in buffers
// kept per connection, so with a handler that writes a constant response it
// allocates nothing per request (the allocation tests rely on that).
type rawServer struct {
	ln      net.Listener
	addr    string
	handle  func(c net.Conn, req *h1.Request, body []byte) bool
	accepts atomic.Int32
	reqs    atomic.Int32
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
}

func newRawServer(t testing.TB, handle func(c net.Conn, req *h1.Request, body []byte) bool) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, addr: ln.Addr().String(), handle: handle, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) url(path string) string { return "http://" + s.addr + path }

func (s *rawServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *rawServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepts.Add(1)
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *rawServer) serveConn(c net.Conn) {
	buf := make([]byte, 64<<10)
	var body []byte
	var req h1.Request
	var dec h1.ChunkedDecoder
	r, w := 0, 0
	fill := func() bool {
		if r == w {
			r, w = 0, 0
		}
		if w == len(buf) {
			w = copy(buf, buf[r:w])
			r = 0
		}
		n, err := c.Read(buf[w:])
		w += n
		return n > 0 || err == nil
	}
	for {
		n, err := req.Parse(buf[r:w], nil)
		if err == h1.ErrNeedMore {
			if !fill() {
				return
			}
			continue
		}
		if err != nil {
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			return
		}
		// Copy the head out of buf so the body may reuse it.
		r += n
		body = body[:0]
		if req.Expect100 {
			if s.handle(c, &req, nil) == false {
				return
			}
		}
		switch {
		case req.Chunked:
			dec.Reset()
			for !dec.Done() {
				m, data, err := dec.Decode(buf[r:w])
				if err == h1.ErrNeedMore {
					if !fill() {
						return
					}
					continue
				}
				if err != nil {
					return
				}
				body = append(body, data...)
				r += m
			}
		case req.ContentLength > 0:
			for int64(len(body)) < req.ContentLength {
				if r == w && !fill() {
					return
				}
				k := min(int64(w-r), req.ContentLength-int64(len(body)))
				body = append(body, buf[r:r+int(k)]...)
				r += int(k)
			}
		}
		s.reqs.Add(1)
		if !s.handle(c, &req, body) {
			return
		}
	}
}

// fixed returns a handler answering every request with resp.
func fixed(resp string) func(net.Conn, *h1.Request, []byte) bool {
	b := []byte(resp)
	return func(c net.Conn, req *h1.Request, body []byte) bool {
		if req.Expect100 && body == nil {
			return true
		}
		c.Write(b)
		return true
	}
}

const helloResp = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!"

// readAllString reads r to the end.
func readAllString(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

var _ = bytes.Equal
