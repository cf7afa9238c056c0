package riptide

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMaxConnsOneSlotPerConnectionAcrossProtocols: MaxConns is one pool
// of slots for every engine and protocol (Server.admit). With MaxConns 1,
// an HTTP/3 connection holding the slot (QUICListener.Admit) gets a TCP
// connection answered 503 on either engine, a second HTTP/3 attempt is
// refused, both counted in Stats.Refused; once released, the TCP
// connection is served and holds the slot against HTTP/3.
func TestMaxConnsOneSlotPerConnectionAcrossProtocols(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineEventLoop} {
		t.Run(e.String(), func(t *testing.T) {
			srv, addr := startServer(t, &Server{MaxConns: 1, Engine: e}, hello)
			l, err := srv.ListenQUIC(QUICOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if !l.Admit() {
				t.Fatal("first HTTP/3 connection refused under MaxConns 1")
			}
			rc := dial(t, addr)
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if res, _ := rc.resp("GET"); res.StatusCode != 503 {
				t.Fatalf("TCP connection while HTTP/3 holds the slot: %d, want 503", res.StatusCode)
			}
			if l.Admit() {
				t.Fatal("second HTTP/3 connection admitted beyond MaxConns 1")
			}
			var st Stats
			srv.Stats(&st)
			if st.Refused != 2 {
				t.Fatalf("Stats.Refused = %d, want 2 (one TCP, one HTTP/3)", st.Refused)
			}
			l.Release()
			rc = dial(t, addr)
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if res, _ := rc.resp("GET"); res.StatusCode != 200 {
				t.Fatalf("TCP connection after the HTTP/3 slot was released: %d, want 200", res.StatusCode)
			}
			if l.Admit() {
				t.Fatal("HTTP/3 connection admitted while a TCP connection holds the slot")
			}
		})
	}
}

// TestH2CUpgradeHoldsOneSlot: a connection upgraded to HTTP/2 (h2c) is
// admitted under MaxConns through Server.admit, as every connection is,
// and holds exactly one slot on either engine: with MaxConns 1, one slot
// is taken while it is open and a TCP connection is refused (503, one in
// Stats.Refused); once it closes the slot is free again and a new
// connection is served.
func TestH2CUpgradeHoldsOneSlot(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineEventLoop} {
		t.Run(e.String(), func(t *testing.T) {
			srv := &Server{MaxConns: 1, Engine: e, HTTP2: &HTTP2Config{H2CUpgrade: true}}
			srv, addr := startServer(t, srv, hello)
			up := dial(t, addr)
			up.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n" +
				"Upgrade: h2c\r\nHTTP2-Settings: \r\n\r\n")
			res, err := http.ReadResponse(up.br, nil)
			if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v %v, want 101", res, err)
			}
			up.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00") // preface, SETTINGS
			if n := srv.nconns.Load(); n != 1 {
				t.Fatalf("%d MaxConns slots taken with one upgraded connection open, want 1", n)
			}
			rc := dial(t, addr)
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if res, _ := rc.resp("GET"); res.StatusCode != 503 {
				t.Fatalf("TCP connection while the upgraded one holds the slot: %d, want 503", res.StatusCode)
			}
			var st Stats
			if srv.Stats(&st); st.Refused != 1 {
				t.Fatalf("Stats.Refused = %d, want 1", st.Refused)
			}
			up.nc.Close()
			for deadline := time.Now().Add(20 * time.Second); srv.nconns.Load() != 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d slots still taken after the upgraded connection closed, want 0", srv.nconns.Load())
				}
			}
			rc = dial(t, addr)
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if res, _ := rc.resp("GET"); res.StatusCode != 200 {
				t.Fatalf("TCP connection after the upgraded one closed: %d, want 200", res.StatusCode)
			}
		})
	}
}

// TestAdmitNeverExceedsMaxConns: admit takes the slot before checking it,
// so attempts racing from every engine and protocol admit exactly
// MaxConns and count the rest refused (a check of the count followed by
// a separate increment lets two attempts both see one free slot).
func TestAdmitNeverExceedsMaxConns(t *testing.T) {
	const maxConns, attempts = 8, 256
	srv := &Server{MaxConns: maxConns}
	srv.init()
	var admitted atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range attempts {
		wg.Go(func() {
			<-start
			if srv.admit() {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := admitted.Load(); n != maxConns {
		t.Fatalf("%d attempts admitted, want MaxConns = %d", n, maxConns)
	}
	var st Stats
	srv.Stats(&st)
	if st.Refused != attempts-maxConns {
		t.Fatalf("Stats.Refused = %d, want %d", st.Refused, attempts-maxConns)
	}
	for range maxConns {
		srv.release()
	}
	if !srv.admit() {
		t.Fatal("refused after every slot was released")
	}
}

// TestIdleRuleOneForEveryEngine: closeIdle (Shutdown, Drain) wakes a
// connection idle between requests, and one new for longer than
// newIdleAfter seconds; never an active one, nor a new one that may have
// its first request in flight. Both engines ask idleToClose.
func TestIdleRuleOneForEveryEngine(t *testing.T) {
	const now = 1000
	for _, tc := range []struct {
		st   ConnState
		age  int64
		want bool
	}{
		{StateIdle, 0, true},
		{StateIdle, 100, true},
		{StateNew, 0, false},
		{StateNew, newIdleAfter, false},
		{StateNew, newIdleAfter + 1, true},
		{StateActive, 100, false},
		{StateHijacked, 100, false},
	} {
		if got := idleToClose(tc.st, now-tc.age, now); got != tc.want {
			t.Errorf("idleToClose(%v, age %d s) = %v, want %v", tc.st, tc.age, got, tc.want)
		}
	}
}
