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
	"sync"
	"time"

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

// H2IdleConns is the connection count of the h2idle workload.
const H2IdleConns = 2_000

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
	conns, errs := openIdle(ctx, r.proc.Addr, r.w, n)
	defer func() {
		for _, c := range conns {
			c.Close()
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
	return []byte(out), st, nil
}

// openIdle dials n connections (64 at a time: the accept backlog is
// finite) and makes one request on each; it returns the connections that
// got a correct response and the number that failed.
func openIdle(ctx context.Context, addr string, w Workload, n int) ([]net.Conn, int) {
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", w.Path, addr)
	one := idleOne
	if w.HTTP2 != H2None {
		one = h2IdleOne
	} else if w.TLS {
		one = tlsIdleOne
	}
	conns, errs, _ := openMany(ctx, n, func() (net.Conn, error) { return one(addr, req, w) })
	return conns, errs
}

// openMany calls open n times, 64 at a time (the accept backlog is
// finite), and returns the connections it opened, the number of failures
// and the first error.
func openMany(ctx context.Context, n int, open func() (net.Conn, error)) ([]net.Conn, int, error) {
	var (
		mu       sync.Mutex
		conns    []net.Conn
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, 64)
	for range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := open()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			conns = append(conns, c)
		}()
	}
	wg.Wait()
	return conns, errs, firstErr
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

// h2IdleOne opens an h2c (prior knowledge) connection to addr, sends one
// GET stream (req, the HTTP/1.1 form, is unused) and checks its response;
// the connection stays open. It acknowledges the server's SETTINGS, as a
// real client does, so the server holds a fully established connection.
func h2IdleOne(addr, _ string, w Workload) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
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
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", addr}, {":path", w.Path}} {
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

// raiseNoFile raises this process's soft RLIMIT_NOFILE towards want (bounded
// by the hard limit) and returns the soft limit in force.
func raiseNoFile(want uint64) int {
	lim, _ := rlimit.RaiseNoFile(want)
	return int(min(lim, 1<<30))
}
