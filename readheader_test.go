package riptide

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestReadHeaderTimeoutFromAccept: for a connection's first request the
// header deadline is the one set at accept, as Server.ReadHeaderTimeout
// documents; it is not restarted when the first bytes of the head arrive,
// nor after the h2c preface sniff (issue 23.9: a client that waited almost
// the timeout before its first byte got 2× the timeout; net/http does not
// restart it). The test reads the deadline itself, so it depends on no
// timing: the timeout is an hour, and the head comes in two writes, the
// server reading the first before the second is sent. Both engines (the
// event loop through a TCP listener, the goroutine engine through a
// wrapped one), with and without h2c.
func TestReadHeaderTimeoutFromAccept(t *testing.T) {
	t.Parallel()
	for _, tcp := range []bool{true, false} {
		for _, h2c := range []bool{false, true} {
			t.Run(fmt.Sprintf("tcp=%v/h2c=%v", tcp, h2c), func(t *testing.T) {
				testReadHeaderFromAccept(t, tcp, h2c)
			})
		}
	}
}

func testReadHeaderFromAccept(t *testing.T, tcp, h2c bool) {
	conns := make(chan net.Conn, 1)
	srv := &Server{
		ReadHeaderTimeout: time.Hour,
		ConnState: func(nc net.Conn, st ConnState) {
			if st == StateNew {
				conns <- nc
			}
		},
	}
	if h2c {
		srv.HTTP2 = &HTTP2Config{H2C: true}
	}
	h := func(c *Ctx) {
		d, _ := readDeadlineOf(c.conn.nc)
		c.WriteString(strconv.FormatInt(d, 10))
	}
	var addr string
	if tcp {
		_, addr = startServer(t, srv, h)
	} else {
		srv.Handler = HandlerFunc(h)
		addr = serveTest(t, srv, testServeOptions{Wrap: func(ln net.Listener) net.Listener { return deadlineListener{ln} }}).Addr
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var nc net.Conn
	select {
	case nc = <-conns:
	case <-time.After(30 * time.Second):
		t.Fatal("no StateNew")
	}
	if _, ok := readDeadlineOf(nc); !ok {
		t.Skipf("cannot read the deadline of a %T (the goroutine engine on a TCP listener: the wrapped listener covers it)", nc)
	}
	// The deadline armed at accept (just after StateNew).
	var atAccept int64
	for i := 0; atAccept == 0; i++ {
		if i == 30000 {
			t.Fatal("no read deadline set after accept")
		}
		time.Sleep(time.Millisecond)
		atAccept, _ = readDeadlineOf(nc)
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	if dc, ok := nc.(*deadlineConn); ok {
		<-dc.read // the server has read the first part
	} else {
		// The event loop: the server reads the first part in this
		// pause (if it does not, the test passes on old code too; it
		// cannot fail on correct code).
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := io.WriteString(c, "Host: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if got := string(body); got != strconv.FormatInt(atAccept, 10) {
		n, _ := strconv.ParseInt(got, 10, 64)
		t.Fatalf("header deadline when the head completed: %s (%v after the one set at accept), want the one set at accept",
			got, time.Duration(n-atAccept))
	}
}

// readDeadlineOf returns the read deadline in force on nc (unix
// nanoseconds, 0 for none), for a deadlineConn or the event loop's socket.
func readDeadlineOf(nc net.Conn) (int64, bool) {
	if dc, ok := nc.(*deadlineConn); ok {
		dc.mu.Lock()
		defer dc.mu.Unlock()
		return dc.dl, true
	}
	return elReadDeadline(nc)
}

// deadlineListener makes the server use the goroutine engine on conns
// whose read deadline readDeadlineOf can see.
type deadlineListener struct{ net.Listener }

func (l deadlineListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: nc, read: make(chan struct{}, 1)}, nil
}

// deadlineConn records its read deadline and reports its first read that
// returned data.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	dl   int64
	read chan struct{}
	once sync.Once
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.dl = deadlineNano(t)
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.dl = deadlineNano(t)
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.once.Do(func() { c.read <- struct{}{} })
	}
	return n, err
}

func deadlineNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
