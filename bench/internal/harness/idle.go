package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/riptide-http/riptide/internal/rlimit"
)

// IdleConns is the connection count of the idle workload.
const IdleConns = 10_000

// TLSIdleConns is the connection count of the idletls workload: each
// connection costs a TLS handshake on both sides (this process and the
// server), so fewer than idle's.
const TLSIdleConns = 2_000

// H2IdleConns is the connection count of the h2idle and h2idletls
// workloads.
const H2IdleConns = 2_000

// H3IdleConns is the connection count of the h3idle workload, and the
// most -connections gives it: each QUIC connection costs both sides a
// handshake and ~80 KiB (quic-go's buffers), and 10,000 of them take about
// two minutes per server on a 2-vCPU machine, with some refused by the
// server's accept queue.
const H3IdleConns = 2_000

// idleConns is w with n idle connections (-connections) when it is an idle
// workload and n is not zero, h3idle's at most H3IdleConns; w otherwise.
func (w Workload) idleConns(n int) Workload {
	if w.HTTP3 {
		n = min(n, H3IdleConns)
	}
	if w.Idle == 0 || n <= 0 {
		return w
	}
	w.Desc = strings.Replace(w.Desc, strconv.Itoa(w.Idle)+" connections", strconv.Itoa(n)+" connections", 1)
	w.Idle = n
	return w
}

// idleSettle is how long the idle workload waits, all connections open,
// before it reads the server's RSS: long enough for goroutines and buffers
// that served the first requests to be released where a server does so.
const idleSettle = 3 * time.Second

// idleRun is one run of the idle workload: open w.Idle connections, make
// one GET on each, wait idleSettle, and report the server's RSS growth
// (VmRSS over its process tree, against the figure before the first
// connection) divided by the connection count. The connections come from
// this process, whose RLIMIT_NOFILE is raised to fit them.
type idleRun struct {
	proc *Proc
	w    Workload
}

func (r idleRun) run(ctx context.Context) ([]byte, WrkStats, error) {
	var st WrkStats
	n := min(r.w.Idle, raiseNoFile(uint64(r.w.Idle+500))-500)
	if n <= 0 {
		return nil, st, fmt.Errorf("RLIMIT_NOFILE too low for the idle workload")
	}
	before, err := r.proc.RSS()
	if err != nil {
		return nil, st, err
	}
	start := time.Now()
	var h3tr *quic.Transport
	if r.w.HTTP3 {
		if h3tr, err = newH3IdleTransport(); err != nil {
			return nil, st, err
		}
	}
	conns, errs, firstErr := openIdle(ctx, r.proc.Addr, r.w, n, h3tr)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		if h3tr != nil {
			h3tr.Close()
		}
	}()
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
		return nil, st, ctx.Err()
	}
	after, err := r.proc.RSS()
	if err != nil {
		return nil, st, err
	}
	st.Requests = int64(len(conns))
	st.Read = int64(errs)
	st.DurationUS = time.Since(start).Microseconds()
	if len(conns) > 0 {
		st.IdleKiBPerConn = float64(after-before) / 1024 / float64(len(conns))
	}
	out := fmt.Sprintf("idle: %d of %d connections answered (%d errors); server RSS %d KiB before, %d KiB with them idle: %.2f KiB per connection\n",
		len(conns), n, errs, before/1024, after/1024, st.IdleKiBPerConn)
	if firstErr != nil {
		out += fmt.Sprintf("first error: %v\n", firstErr)
	}
	return []byte(out), st, nil
}

// openIdle dials n connections (64 at a time: the accept backlog is
// finite) and makes one request on each; it returns the connections that
// got a correct response, the number that failed and the first error.
// HTTP/3 connections go through h3tr.
func openIdle(ctx context.Context, addr string, w Workload, n int, h3tr *quic.Transport) (conns []io.Closer, errs int, firstErr error) {
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", w.Path, addr)
	one := func(addr, req string, w Workload) (io.Closer, error) { return idleOne(addr, req, w) }
	switch {
	case w.HTTP3:
		one = func(addr, _ string, w Workload) (io.Closer, error) { return h3IdleOne(ctx, h3tr, addr, w) }
	case w.HTTP2 != H2None:
		one = func(addr, req string, w Workload) (io.Closer, error) { return h2IdleOne(addr, req, w) }
	case w.TLS:
		one = func(addr, req string, w Workload) (io.Closer, error) { return tlsIdleOne(addr, req, w) }
	}
	return openMany(ctx, n, idleDials(w), func() (io.Closer, error) { return one(addr, req, w) })
}

// idleOne dials addr, sends req and checks the response; the connection
// stays open.
func idleOne(addr, req string, w Workload) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return idleGet(c, req, w)
}

// tlsIdleOne is idleOne over TLS: the handshake offers ALPN http/1.1 only
// (the server's self-signed certificate is not verified).
func tlsIdleOne(addr, req string, w Workload) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		return nil, err
	}
	return idleGet(c, req, w)
}

// idleGet sends req on c and checks the response; c stays open, or is
// closed on an error.
func idleGet(c net.Conn, req string, w Workload) (net.Conn, error) {
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		if err == nil && (resp.StatusCode != 200 || string(body) != string(w.ExpectBody)) {
			err = fmt.Errorf("status %d, body %q", resp.StatusCode, body)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// h2IdleOne opens an h2c (prior knowledge) connection to addr, or with
// w.HTTP2 H2TLS a TLS one offering ALPN h2 only (the server's self-signed
// certificate is not verified), sends one GET stream (req, the HTTP/1.1
// form, is unused) and checks its response; the connection stays open. It
// acknowledges the server's SETTINGS, as a real client does, so the server
// holds a fully established connection.
func h2IdleOne(addr, _ string, w Workload) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	var c net.Conn
	var err error
	if w.HTTP2 == H2TLS {
		var tc *tls.Conn
		tc, err = tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" {
			tc.Close()
			return nil, fmt.Errorf("ALPN %q, want h2", tc.ConnectionState().NegotiatedProtocol)
		}
		c = tc
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	err = h2GetOnce(c, addr, w)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

func h2GetOnce(c net.Conn, addr string, w Workload) error {
	bw := bufio.NewWriterSize(c, 512)
	bw.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(bw, bufio.NewReaderSize(c, 4096))
	fr.WriteSettings()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", w.h2Scheme()}, {":authority", addr}, {":path", w.Path}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
	if err := bw.Flush(); err != nil {
		return err
	}
	var body []byte
	status := ""
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			status = f.Value
		}
	})
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		ended := false
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
				if err := bw.Flush(); err != nil {
					return err
				}
			}
		case *http2.HeadersFrame:
			if _, err := dec.Write(f.HeaderBlockFragment()); err != nil {
				return err
			}
			ended = f.StreamID == 1 && f.StreamEnded()
		case *http2.DataFrame:
			if f.StreamID == 1 {
				body = append(body, f.Data()...)
				ended = f.StreamEnded()
			}
		case *http2.RSTStreamFrame:
			return fmt.Errorf("stream reset: %v", f.ErrCode)
		case *http2.GoAwayFrame:
			return fmt.Errorf("GOAWAY: %v", f.ErrCode)
		}
		if ended {
			if status != "200" || string(body) != string(w.ExpectBody) {
				return fmt.Errorf("status %s, body %q", status, body)
			}
			return nil
		}
	}
}

// idleDials is how many connections openIdle dials at a time: 64 (the
// accept backlog is finite), 16 for HTTP/3, whose server refuses
// connections (CONNECTION_REFUSED) once its queue of handshakes waiting to
// be accepted is full (10 to 24 of 2,000 at 64, loaded machine).
func idleDials(w Workload) int {
	if w.HTTP3 {
		return 16
	}
	return 64
}

// raiseNoFile raises this process's soft RLIMIT_NOFILE towards want (bounded
// by the hard limit) and returns the soft limit in force.
func raiseNoFile(want uint64) int {
	lim, _ := rlimit.RaiseNoFile(want)
	return int(min(lim, 1<<30))
}

// h2Scheme is the :scheme of an HTTP/2 workload's requests.
func (w Workload) h2Scheme() string {
	if w.HTTP2 == H2TLS {
		return "https"
	}
	return "http"
}

// newH3IdleTransport is the h3idle client's QUIC transport: one UDP
// socket for all its connections (a socket each would cost the harness a
// descriptor and a receive goroutine per connection).
func newH3IdleTransport() (*quic.Transport, error) {
	uc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	return &quic.Transport{Conn: uc}, nil
}

// h3IdleOne opens an HTTP/3 connection to addr over tr, makes one GET on
// it and checks the response; the connection stays open. It sends a PING
// every 10 s (KeepAlivePeriod), so that connections opened first do not
// reach the idle timeout while the last ones open: the server holds them
// all, idle between PINGs.
func h3IdleOne(ctx context.Context, tr *quic.Transport, addr string, w Workload) (io.Closer, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var qc *quic.Conn
	for try := 0; ; try++ {
		// A server whose queue of new connections is full refuses one
		// (CONNECTION_REFUSED): the client tries again, twice.
		qc, err = tr.Dial(ctx, ua, h3ClientTLS, &quic.Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 10 * time.Second})
		if err == nil || try == 2 || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	c := &h3Conn{qc: qc}
	if err := c.idleGet(ctx, w); err != nil {
		c.close()
		return nil, err
	}
	return h3Closer{c}, nil
}

// h3Closer closes an idle HTTP/3 connection (H3_NO_ERROR).
type h3Closer struct{ c *h3Conn }

func (h h3Closer) Close() error { h.c.close(); return nil }

// idleGet opens the control stream (SETTINGS) and makes one GET on c,
// checking the response.
func (c *h3Conn) idleGet(ctx context.Context, w Workload) error {
	if err := c.start(); err != nil {
		return err
	}
	s, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	s.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := s.Write(h3Request(w)); err != nil {
		return err
	}
	s.Close()
	rd := &h3Reader{br: bufio.NewReaderSize(nil, 4096), p: make([]byte, 4096), fbuf: make([]byte, 0, 4096)}
	status, _, err := rd.response(s, w)
	if err == nil && status != 200 {
		err = fmt.Errorf("status %d", status)
	}
	return err
}

// OpenIdle opens n connections of the TCP idle workload w (idle, idletls,
// h2idle or h2idletls) to addr as the workload does (the same clients, 64
// dials at a time, one checked request on each) and returns those that
// answered, left open, with the count that failed and the first error. It
// raises this process's RLIMIT_NOFILE to fit them. For programs that
// measure an idle server themselves (cmd/tlsfloor).
func OpenIdle(ctx context.Context, addr string, w Workload, n int) (conns []io.Closer, errs int, firstErr error) {
	if w.HTTP3 || w.Idle == 0 {
		return nil, 0, fmt.Errorf("%s is not a TCP idle workload", w.Name)
	}
	n = min(n, raiseNoFile(uint64(n+500))-500)
	return openIdle(ctx, addr, w, n, nil)
}
