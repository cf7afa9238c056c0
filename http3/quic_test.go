package http3

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/quicx"
)

func testTLS(t testing.TB) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"h3"}}
}

// TestAdapter drives a loopback quic-go connection through the quicx
// adapters: streams accepted and opened, data both ways, error codes
// passed through to the peer, and the connection closed with an HTTP/3
// code.
func TestAdapter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := quic.DialAddr(ctx, ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.CloseWithError(0, "")
	qc, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var c quicx.Conn = conn{qc}
	if c.RemoteAddr().(*net.UDPAddr).Port != cc.LocalAddr().(*net.UDPAddr).Port || c.LocalAddr().String() != ln.Addr().String() || c.State().TLS.NegotiatedProtocol != "h3" || c.State().Used0RTT {
		t.Fatalf("remote %v, state %+v", c.RemoteAddr(), c.State())
	}
	select {
	case <-c.HandshakeComplete():
	case <-ctx.Done():
		t.Fatal("handshake not complete")
	}

	// A request stream: the client's bytes in, the server's out.
	cs, err := cc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs.Write([]byte("ping"))
	cs.Close()
	s, err := c.AcceptStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(s); err != nil || string(got) != "ping" || s.StreamID() != 0 {
		t.Fatalf("read %q, %v on stream %d", got, err, s.StreamID())
	}
	s.Write([]byte("pong"))
	s.Close()
	if got, err := io.ReadAll(cs); err != nil || string(got) != "pong" {
		t.Fatalf("client read %q, %v", got, err)
	}

	// A second request stream reset by the server: the code arrives.
	cs2, _ := cc.OpenStreamSync(ctx)
	cs2.Write([]byte("x"))
	s2, err := c.AcceptStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2.CancelWrite(uint64(h3.CodeRequestRejected))
	var se *quic.StreamError
	if _, err := io.ReadAll(cs2); !errors.As(err, &se) || uint64(se.ErrorCode) != uint64(h3.CodeRequestRejected) {
		t.Fatalf("client read after CancelWrite: %v", err)
	}

	// The client's control stream, and the server's.
	cu, _ := cc.OpenUniStream()
	cu.Write(h3.AppendVarint(nil, uint64(h3.StreamControl)))
	u, err := c.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := io.ReadFull(u, b[:]); err != nil || b[0] != 0 || u.StreamID() != 2 {
		t.Fatalf("uni stream %d read %x, %v", u.StreamID(), b, err)
	}
	su, err := c.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	su.Write(h3.AppendSettings(h3.AppendVarint(nil, uint64(h3.StreamControl)), &h3.Settings{}))
	cr, err := cc.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got [3]byte
	if _, err := io.ReadFull(cr, got[:]); err != nil || got != [3]byte{0, 4, 0} || su.StreamID() != 3 {
		t.Fatalf("client read %x, %v from stream %d", got, err, su.StreamID())
	}

	// Closing with an HTTP/3 code.
	c.CloseWithError(uint64(h3.CodeNoError), "bye")
	<-cc.Context().Done()
	var ae *quic.ApplicationError
	if err := context.Cause(cc.Context()); !errors.As(err, &ae) || uint64(ae.ErrorCode) != uint64(h3.CodeNoError) {
		t.Fatalf("client close cause %v", err)
	}
	select {
	case <-c.Context().Done():
	case <-ctx.Done():
		t.Fatal("server connection context not done")
	}
}

var sink any

// Wrapping quic-go's types in the adapters allocates nothing.
func TestAdapterAllocs(t *testing.T) {
	s, r, w, c := &quic.Stream{}, &quic.ReceiveStream{}, &quic.SendStream{}, &quic.Conn{}
	if n := testing.AllocsPerRun(100, func() {
		var x quicx.Stream = stream{s}
		var y quicx.ReceiveStream = recvStream{r}
		var z quicx.SendStream = sendStream{w}
		var v quicx.Conn = conn{c}
		sink, sink, sink, sink = x, y, z, v
	}); n != 0 {
		t.Errorf("wrapping: %v allocs/op, want 0", n)
	}
}

// gauge counts things in progress (handlers in flight) and keeps the
// highest count reached. Safe for concurrent use.
type gauge struct{ cur, peak atomic.Int32 }

// Inc counts one more.
func (g *gauge) Inc() {
	now := g.cur.Add(1)
	for {
		old := g.peak.Load()
		if now <= old || g.peak.CompareAndSwap(old, now) {
			return
		}
	}
}

// Dec counts one less.
func (g *gauge) Dec() { g.cur.Add(-1) }

// Load returns the count.
func (g *gauge) Load() int32 { return g.cur.Load() }

// Peak returns the highest count reached.
func (g *gauge) Peak() int32 { return g.peak.Load() }

// liveHeap returns the bytes of live heap objects after two collections,
// for tests that check a bound on memory or its return to a baseline.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
