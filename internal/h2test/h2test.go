// Package h2test is a raw HTTP/2 client for tests: an Attacker writes
// whatever frames a test asks for (with x/net/http2's Framer) and reports
// what the server sent back. internal/h2's frame-level tests drive the
// engine with it, and the root package's tests a riptide.Server.
package h2test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// AttackBound is the most time any single attack connection may take: a
// safety net for a hung server, not a performance threshold.
const AttackBound = 60 * time.Second

// Dial opens a raw connection to addr: TCP, or TLS with tlsConf, whose
// ALPN must pick h2. readBuf, when positive, shrinks the socket receive
// buffer first, so that a client that does not read makes the server's
// writes back up quickly.
func Dial(t testing.TB, addr string, tlsConf *tls.Config, readBuf int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if readBuf > 0 {
		_ = c.(*net.TCPConn).SetReadBuffer(readBuf)
	}
	if tlsConf == nil {
		return c
	}
	tc := tls.Client(c, tlsConf)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		c.Close()
		t.Fatalf("ALPN negotiated %q, want h2", p)
	}
	return tc
}

// CloseRaw closes c without a TLS close_notify, which would wait on a
// server that no longer reads.
func CloseRaw(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	c.Close()
}

// An Attacker is a raw HTTP/2 client connection.
type Attacker struct {
	T    testing.TB
	Conn net.Conn
	Fr   *http2.Framer
	// Scheme and Authority are the :scheme and :authority of
	// RequestBlock.
	Scheme, Authority string
}

// NewAttacker takes c (closed when the test ends, at the latest
// AttackBound from now), sends the client preface and an empty SETTINGS
// frame. The Framer decodes header blocks (MetaHeadersFrame).
func NewAttacker(t testing.TB, c net.Conn, scheme, authority string) *Attacker {
	t.Helper()
	t.Cleanup(func() { CloseRaw(c) })
	_ = c.SetDeadline(time.Now().Add(AttackBound))
	a := &Attacker{T: t, Conn: c, Fr: http2.NewFramer(c, c), Scheme: scheme, Authority: authority}
	a.Fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	a.Fr.MaxHeaderListSize = 1 << 20
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := a.Fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return a
}

// RequestBlock is an HPACK block for GET path with the extra fields,
// encoded without indexing so that the same bytes may be sent any number
// of times.
func (a *Attacker) RequestBlock(path string, extra ...hpack.HeaderField) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := append([]hpack.HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: a.Scheme},
		{Name: ":authority", Value: a.Authority, Sensitive: true},
		{Name: ":path", Value: path, Sensitive: true},
	}, extra...)
	for _, f := range fields {
		if err := enc.WriteField(f); err != nil {
			a.T.Fatal(err)
		}
	}
	return buf.Bytes()
}

// Seen is what the server sent on an attack connection.
type Seen struct {
	Ended      bool          // the server ended the connection (GOAWAY, EOF or reset)
	GoAway     bool          // a GOAWAY frame arrived
	GoAwayCode http2.ErrCode // its error code
	RSTs       int           // RST_STREAM frames received
	Acks       int           // SETTINGS and PING acknowledgements received
	Statuses   map[string]int
	EndErr     error // the read error that ended the connection
}

func (s Seen) String() string {
	var b strings.Builder
	if s.GoAway {
		b.WriteString("GOAWAY(" + s.GoAwayCode.String() + ") ")
	}
	if s.EndErr != nil {
		b.WriteString("end(" + s.EndErr.Error() + ") ")
	}
	b.WriteString("rst=" + strconv.Itoa(s.RSTs))
	for k, v := range s.Statuses {
		b.WriteString(" :status " + k + "×" + strconv.Itoa(v))
	}
	return b.String()
}

// Drain reads frames in a goroutine until the connection ends, and
// delivers what it saw. It ends at the latest when the connection
// deadline passes.
func (a *Attacker) Drain() <-chan Seen {
	ch := make(chan Seen, 1)
	go func() {
		s := Seen{Statuses: map[string]int{}}
		for {
			f, err := a.Fr.ReadFrame()
			if err != nil {
				var ne net.Error
				s.Ended = !(errors.As(err, &ne) && ne.Timeout())
				s.EndErr = err
				ch <- s
				return
			}
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				s.GoAway, s.GoAwayCode = true, f.ErrCode
			case *http2.RSTStreamFrame:
				s.RSTs++
			case *http2.SettingsFrame:
				if f.IsAck() {
					s.Acks++
				}
			case *http2.PingFrame:
				if f.IsAck() {
					s.Acks++
				}
			case *http2.MetaHeadersFrame:
				s.Statuses[f.PseudoValue("status")]++
			}
		}
	}()
	return ch
}

// Wait returns what Drain saw, closing the connection from the client
// side if the server has not ended it within AttackBound.
func (a *Attacker) Wait(ch <-chan Seen) Seen {
	select {
	case s := <-ch:
		return s
	case <-time.After(AttackBound):
		CloseRaw(a.Conn)
		s := <-ch
		s.Ended = false // the client gave up, the server did not end it
		return s
	}
}

// NextReset returns the next RST_STREAM on stream id, as
// "RST_STREAM(CODE)", or what ended the connection: "GOAWAY(CODE)" or
// "end(error)".
func (a *Attacker) NextReset(id uint32) string {
	for {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			return "end(" + err.Error() + ")"
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return "RST_STREAM(" + f.ErrCode.String() + ")"
			}
		case *http2.GoAwayFrame:
			return "GOAWAY(" + f.ErrCode.String() + ")"
		}
	}
}

// LiveHeap returns the bytes of live heap after a full collection.
func LiveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// ContinuationFlood sends a HEADERS frame for path on stream 1 without
// END_HEADERS, then up to frames CONTINUATION frames, each about 16 KiB
// of whole, valid header fields (the same fragment), until a write fails.
// It returns the CONTINUATION frames sent, the fragment's length and the
// write error.
func (a *Attacker) ContinuationFlood(path string, frames int) (sent, fragLen int, err error) {
	var frag bytes.Buffer
	enc := hpack.NewEncoder(&frag)
	field := hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("a", 100), Sensitive: true}
	for frag.Len() < 16000 {
		_ = enc.WriteField(field)
	}
	err = a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock(path), EndStream: true})
	for ; err == nil && sent < frames; sent++ {
		err = a.Fr.WriteContinuation(1, false, frag.Bytes())
	}
	return sent, frag.Len(), err
}

// FloodWithoutReading writes up to frames frames with write, never
// reading, until a write fails; a write blocked for stall (the server no
// longer reading) fails with a timeout. It returns the frames sent and
// the write error.
func (a *Attacker) FloodWithoutReading(frames int, stall time.Duration, write func(*http2.Framer) error) (sent int, err error) {
	for ; err == nil && sent < frames; sent++ {
		if sent%256 == 0 {
			_ = a.Conn.SetWriteDeadline(time.Now().Add(stall))
		}
		err = write(a.Fr)
	}
	return sent, err
}
