package riptide

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/internal/clock"
)

// countAddrConn is a memConn that counts its LocalAddr calls.
type countAddrConn struct {
	memConn
	laddr  net.TCPAddr
	lcalls int
}

func (m *countAddrConn) LocalAddr() net.Addr { m.lcalls++; return &m.laddr }

// TestCompatLocalAddrOncePerConn checks that the compat door asks the
// connection for its local address once, not once per request: on the
// event loop, with a listener bound to an unspecified address, each ask is
// a getsockname call and an allocation. Every request's Context still
// holds the address under http.LocalAddrContextKey.
func TestCompatLocalAddrOncePerConn(t *testing.T) {
	t.Parallel()
	const n = 5
	var got []net.Addr
	s := &Server{Handler: FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		got = append(got, a)
	}))}
	s.init()
	clock.Acquire()
	defer clock.Release()
	m := &countAddrConn{laddr: net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}}
	m.batch = []byte(strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", n))
	m.left = 1
	c := newConn(s, m)
	s.trackConn(c, true)
	c.serve()
	if len(got) != n {
		t.Fatalf("served %d requests, want %d", len(got), n)
	}
	for i, a := range got {
		if a == nil || a.String() != "127.0.0.1:8080" {
			t.Errorf("request %d: LocalAddrContextKey = %v, want 127.0.0.1:8080", i, a)
		}
	}
	if m.lcalls != 1 {
		t.Errorf("LocalAddr called %d times for %d requests on one connection, want 1", m.lcalls, n)
	}
}

// TestCompatHeadAroundBlockSizes builds requests whose heads lie on either
// side of what the smallest request block holds whole (with 0 to 7 header
// values), so that both the whole-head copy and the compact copy serve
// them, and checks each Request against net/http's reading of the same
// bytes.
func TestCompatHeadAroundBlockSizes(t *testing.T) {
	t.Parallel()
	var heads []string
	for nvals := 0; nvals <= 7; nvals++ {
		for _, size := range []int{60, 72, 73, 80, 90, 87, 88, 89, 103, 104, 105, 119, 120, 121, 151, 152, 153, 167, 168, 169, 199, 200, 201, 215, 216, 217, 260} {
			h := "GET /p?q=1 HTTP/1.1\r\nHost: example.com\r\n"
			for i := range nvals {
				h += fmt.Sprintf("X-F%d: v%d\r\n", i, i)
			}
			pad := size - len(h) - len("\r\n")
			if nvals > 0 {
				pad -= len("X-Pad: \r\n")
				if pad < 1 {
					continue
				}
				h = strings.Replace(h, "X-F0:", "X-Pad: "+strings.Repeat("p", pad)+"\r\nX-F0:", 1)
			} else if pad < 0 {
				continue
			} else {
				h = strings.Replace(h, "/p?q=1", "/p?q="+strings.Repeat("1", pad+1), 1)
			}
			heads = append(heads, h+"\r\n")
		}
	}
	var twice []string
	for _, h := range heads {
		// Twice on one connection: a slab of two blocks serves the second.
		twice = append(twice, h+h)
	}
	got := compatMemRequests(t, twice)
	if len(got) != 2*len(heads) {
		t.Fatalf("served %d requests, want %d", len(got), 2*len(heads))
	}
	for i, raw := range heads {
		for _, r := range got[2*i : 2*i+2] {
			want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != want.Method || r.RequestURI != want.RequestURI || r.URL.String() != want.URL.String() ||
				r.Host != want.Host || !reflect.DeepEqual(r.Header, want.Header) {
				t.Errorf("head of %d bytes: got %s %q %q %q %v, want %s %q %q %q %v", len(raw),
					r.Method, r.RequestURI, r.URL, r.Host, r.Header, want.Method, want.RequestURI, want.URL, want.Host, want.Header)
			}
		}
	}
}

// TestCompatShortHeadSmallBlock checks that a load generator's short GET
// (a Host field only, or two short values) is built in a block of the
// 640-byte size class, not 768: with the runtime's 8-byte header the block
// is 640 bytes.
func TestCompatShortHeadSmallBlock(t *testing.T) {
	t.Parallel()
	const mallocHeader = 8
	wrk := "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
	for _, tc := range []struct{ nvals, nhead int }{{0, len(wrk)}, {1, 56}, {2, 40}} {
		var s compatSlab
		s.take(tc.nvals, tc.nhead, compatSlabMax, false)
		if s.shape == nil {
			t.Fatalf("%d values, %d head bytes: no slab", tc.nvals, tc.nhead)
		}
		if size := s.shape.size + mallocHeader; size != 640 {
			t.Errorf("%d values, %d head bytes: a %d-byte block, want 640", tc.nvals, tc.nhead, size)
		}
	}
}

// TestCompatPragma checks net/http's rule that "Pragma: no-cache" without
// a Cache-Control field implies "Cache-Control: no-cache", whatever the
// case of the field name, against net/http's reading of the same request.
func TestCompatPragma(t *testing.T) {
	t.Parallel()
	heads := []string{
		"GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\npragma: no-cache\r\nAccept: */*\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nPRAGMA: no-cache\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\nCache-Control: max-age=0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nPragma: other\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nPragmas: no-cache\r\n\r\n",
	}
	got := compatMemRequests(t, heads)
	if len(got) != len(heads) {
		t.Fatalf("served %d requests, want %d", len(got), len(heads))
	}
	for i, raw := range heads {
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i].Header, want.Header) {
			t.Errorf("%q: Header %v, want %v", raw, got[i].Header, want.Header)
		}
	}
}

// compatMemRequests serves each batch of requests on an in-memory
// connection of its own (read at once) through the compat door and
// returns the Requests the handler got, in order.
func compatMemRequests(t *testing.T, batches []string) []*http.Request {
	var got []*http.Request
	s := &Server{Handler: FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r)
	}))}
	s.init()
	clock.Acquire()
	defer clock.Release()
	for _, b := range batches {
		c := newConn(s, &memConn{batch: []byte(b), left: 1})
		s.trackConn(c, true)
		c.serve()
	}
	return got
}
