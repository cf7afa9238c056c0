package riptide

import (
	"net"
	"net/http"
	"strings"
	"testing"
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
	const n = 5
	var got []net.Addr
	s := &Server{Handler: FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		got = append(got, a)
	}))}
	s.init()
	clockAcquire()
	defer clockRelease()
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
