package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/riptide-http/riptide/websocket"

	"github.com/riptide-http/riptide/bench/internal/harness"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

// checkWS checks a WebSocket server (TestServers' "ws" subtest) with
// riptide's own client, independent of the harness's: text and binary
// messages of 1 byte to 100 KiB echoed exactly, a published message
// reaching every subscriber and not the publisher, the heap report; then
// the harness's workloads briefly (wsidle with 50 connections, wsecho,
// wsbroadcast), none flagged. A server that is not a WebSocket server
// must not run the WebSocket workloads.
func checkWS(t *testing.T, ctx context.Context, s harness.Server, binDir string) {
	if !s.WS {
		for _, w := range harness.Workloads() {
			if w.WS != harness.WSNone && s.Supports(w) {
				t.Fatalf("%s is not a WebSocket server but Supports(%s)", s.Name, w.Name)
			}
		}
		return
	}
	p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	base := "ws://" + p.Addr

	t.Run("echo", func(t *testing.T) {
		c, _, err := websocket.Dial(ctx, base+wsserver.EchoPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for _, n := range []int{1, 125, 126, 1024, 65535, 65536, 100 << 10} {
			for _, mt := range []websocket.MessageType{websocket.TextMessage, websocket.BinaryMessage} {
				msg := bytes.Repeat([]byte{'a' + byte(n%26)}, n)
				if err := c.WriteMessage(mt, msg); err != nil {
					t.Fatal(err)
				}
				gt, got, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("%d-byte message: %v", n, err)
				}
				if gt != mt || !bytes.Equal(got, msg) {
					t.Fatalf("%d-byte message type %v: echoed type %v, %d bytes", n, mt, gt, len(got))
				}
			}
		}
	})

	t.Run("broadcast", func(t *testing.T) {
		type recv struct {
			msg []byte
			err error
		}
		var subs []chan recv
		for range 2 {
			c, _, err := websocket.Dial(ctx, base+wsserver.SubscribePath, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ch := make(chan recv, 64)
			subs = append(subs, ch)
			go func() {
				for {
					_, m, err := c.ReadMessage()
					ch <- recv{append([]byte(nil), m...), err}
					if err != nil {
						return
					}
				}
			}()
		}
		pub, _, err := websocket.Dial(ctx, base+wsserver.PublishPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close()
		pubGot := make(chan error, 1)
		go func() {
			_, _, err := pub.ReadMessage()
			pubGot <- err
		}()
		// The server adds a subscriber to its group once upgraded, which
		// may be after Dial returns: publish until each has one message.
		msg := []byte("hello, subscribers")
		deadline := time.Now().Add(30 * time.Second)
		for i, ch := range subs {
			for {
				if err := pub.WriteMessage(websocket.TextMessage, msg); err != nil {
					t.Fatal(err)
				}
				select {
				case r := <-ch:
					if r.err != nil || !bytes.Equal(r.msg, msg) {
						t.Fatalf("subscriber %d got %q, %v", i, r.msg, r.err)
					}
				case <-time.After(50 * time.Millisecond):
					if time.Now().After(deadline) {
						t.Fatalf("subscriber %d got nothing in 30 s", i)
					}
					continue
				}
				break
			}
		}
		select {
		case err := <-pubGot:
			t.Fatalf("the publisher got its own message back (read error %v)", err)
		case <-time.After(100 * time.Millisecond):
		}
	})

	t.Run("heap", func(t *testing.T) {
		resp, err := http.Get("http://" + p.Addr + wsserver.HeapPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var hs map[string]int64
		if err := json.Unmarshal(body, &hs); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d, body %q: %v", resp.StatusCode, body, err)
		}
		if hs["heap_bytes"] <= 0 || hs["stack_bytes"] <= 0 || hs["goroutines"] <= 0 {
			t.Fatalf("heap report %s", body)
		}
	})

	t.Run("workloads", func(t *testing.T) {
		for _, name := range []string{"wsidle", "wsecho", "wsbroadcast"} {
			w, _ := harness.LookupWorkload(name)
			w.Conns = 50
			out, st, err := harness.RunWS(ctx, p, p.Addr, w, 300*time.Millisecond)
			if flag := harness.FlagOf(st, err, p); flag != "" || st.Requests == 0 {
				t.Fatalf("%s: count %d, flag %q\n%s", name, st.Requests, flag, out)
			}
			if w.WS == harness.WSIdle && (st.Requests != 50 || st.HeapKiBPerConn == 0) {
				t.Errorf("%s: %d connections, heap %v KiB per connection\n%s", name, st.Requests, st.HeapKiBPerConn, out)
			}
			if w.WS != harness.WSIdle && st.ServerCPUSeconds <= 0 {
				t.Errorf("%s: server CPU %v\n%s", name, st.ServerCPUSeconds, out)
			}
		}
	})
}
