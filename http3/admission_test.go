package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
)

// deafConn is a client's UDP socket that sends and never receives: a
// handshake on it never gets past the client's first flight (a spoofed
// source address, as the server sees it).
type deafConn struct {
	net.PacketConn
	closed chan struct{}
	once   sync.Once
}

func (c *deafConn) ReadFrom([]byte) (int, net.Addr, error) {
	<-c.closed
	return 0, nil, net.ErrClosed
}

func (c *deafConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.PacketConn.Close()
}

// peerCounter is the server's packet connection, recording the addresses
// it received packets from and sent packets to.
type peerCounter struct {
	net.PacketConn
	mu    sync.Mutex
	peers map[string]bool // sent to
	from  map[string]bool // received from
}

func (c *peerCounter) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := c.PacketConn.ReadFrom(p)
	if a != nil {
		c.mu.Lock()
		c.from[a.String()] = true
		c.mu.Unlock()
	}
	return n, a, err
}

func (c *peerCounter) WriteTo(p []byte, addr net.Addr) (int, error) {
	c.mu.Lock()
	c.peers[addr.String()] = true
	c.mu.Unlock()
	return c.PacketConn.WriteTo(p, addr)
}

func (c *peerCounter) received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.from)
}

func (c *peerCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.peers)
}

// TestInitialFloodMaxConns: with MaxConns 50, 200 QUIC handshakes from
// distinct source ports that never get past the client's Initial (each a
// quic-go client on its own socket that drops every packet it is sent)
// take no slot of the connection count the TCP connections share: while
// they are in progress (the server's socket received every client's
// Initial), every TLS-over-TCP request on a new connection is
// served, at least 90% of the HTTP/3 GETs on new connections are, and no
// connection was refused (Stats.Refused 0). Before, the first 50 Initials
// took every slot until their handshake timed out, and Retry never started
// (it counted admitted handshakes, which MaxConns capped below 64).
func TestInitialFloodMaxConns(t *testing.T) {
	const attackers, probes = 200, 20
	// The sockets are wrapped (not *net.UDPConn): quic-go cannot size
	// their buffers, which it would log.
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	srv := &riptide.Server{
		MaxConns: 50,
		// The half-open handshakes outlive the test (its end closes them).
		ReadHeaderTimeout: time.Minute,
		Handler:           riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("ok") }),
	}
	cert := testTLS(t)
	srv.TLSConfig = &tls.Config{Certificates: cert.Certificates}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcpDone := make(chan error, 1)
	go func() { tcpDone <- srv.ServeTLS(ln, "", "") }()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	server := &peerCounter{PacketConn: pc, peers: map[string]bool{}, from: map[string]bool{}}
	udpDone := make(chan error, 1)
	go func() { udpDone <- Serve(srv, server, cert, nil) }()
	defer func() {
		srv.Close()
		<-tcpDone
		<-udpDone
	}()
	addr := pc.LocalAddr()

	// The attack: each client's Dial runs until the test's end.
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range attackers {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dc := &deafConn{PacketConn: c, closed: make(chan struct{})}
		tr := &quic.Transport{Conn: dc}
		wg.Go(func() {
			defer tr.Close()
			defer dc.Close() // first: its reads end, which tr.Close waits for
			qc, err := tr.Dial(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{HandshakeIdleTimeout: time.Minute})
			if err == nil {
				qc.CloseWithError(0, "")
				t.Error("a handshake with a client that receives nothing completed")
			}
		})
	}
	// Every attacker's Initial reached the server's socket, and the
	// server answered more of them (its first flight, a refusal or a
	// Retry) than MaxConns or RetryThreshold: the handshakes it keeps are
	// in place. (It need not answer each: quic-go drops a Retry when its
	// queue of them is full, and the clients' retransmissions come in
	// lockstep.)
	for i := 0; server.received() < attackers || server.count() < 100; i++ {
		if i == 3000 {
			t.Fatalf("the server received Initials from %d of %d attacking sources and answered %d", server.received(), attackers, server.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	answered := server.count()

	tcpServed := 0
	for i := range probes {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			t.Errorf("TLS over TCP request %d: %v", i, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Errorf("TLS over TCP request %d: %d %q, want 200 ok", i, resp.StatusCode, b)
			continue
		}
		tcpServed++
	}
	h3Served := 0
	for i := range probes {
		c := h3Client(t)
		rctx, rcancel := context.WithTimeout(t.Context(), 20*time.Second)
		req, _ := http.NewRequestWithContext(rctx, "GET", "https://"+addr.String()+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			rcancel()
			t.Logf("HTTP/3 GET %d: %v", i, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rcancel()
		c.Transport.(io.Closer).Close()
		if resp.StatusCode == 200 && string(b) == "ok" {
			h3Served++
		}
	}
	var st riptide.Stats
	srv.Stats(&st)
	t.Logf("during the flood of %d half-open handshakes (%d sources answered before the probes): TLS over TCP %d/%d served, HTTP/3 %d/%d, refused %d", attackers, answered, tcpServed, probes, h3Served, probes, st.Refused)
	if h3Served*10 < probes*9 {
		t.Errorf("HTTP/3 GETs served during the flood: %d of %d, want at least 90%%", h3Served, probes)
	}
	if st.Refused != 0 {
		t.Errorf("Stats.Refused %d, want 0: a slot of MaxConns 50 was taken by a handshake that never got past its Initial", st.Refused)
	}
}
