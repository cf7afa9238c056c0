package ecosystem

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsEcho upgrades (through http.Hijacker) and echoes every message until the
// client closes.
func wsEcho(t *testing.T) http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, http.Header{"X-Echo": {"yes"}})
		if err != nil {
			// The library has already answered (400 for a plain request).
			if websocket.IsWebSocketUpgrade(r) {
				t.Errorf("Upgrade: %v", err)
			}
			return
		}
		defer conn.Close()
		for {
			typ, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if err := conn.WriteMessage(typ, msg); err != nil {
				return
			}
		}
	})
}

// wsRoundTrip dials url, checks the upgrade response and echoes a text, a
// large binary message and a close.
func wsRoundTrip(t *testing.T, url string) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, res, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer conn.Close()
	if res.StatusCode != 101 || res.Header.Get("X-Echo") != "yes" {
		t.Errorf("upgrade response: %d, X-Echo %q", res.StatusCode, res.Header.Get("X-Echo"))
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	msgs := []struct {
		typ  int
		data []byte
	}{
		{websocket.TextMessage, []byte("hello riptide")},
		{websocket.BinaryMessage, bytes.Repeat([]byte{0, 1, 2, 3, 255}, 100_000)},
		{websocket.TextMessage, []byte(strings.Repeat("é", 10))},
	}
	for _, m := range msgs {
		if err := conn.WriteMessage(m.typ, m.data); err != nil {
			t.Fatalf("WriteMessage: %v", err)
		}
		typ, got, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("ReadMessage: %v", err)
		}
		if typ != m.typ || !bytes.Equal(got, m.data) {
			t.Fatalf("echo: type %d, %d bytes; want type %d, %d bytes", typ, len(got), m.typ, len(m.data))
		}
	}
	err = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"))
	if err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after close: %v, want a normal close", err)
	}
}

func TestGorillaWebsocket(t *testing.T) {
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		mux := http.NewServeMux()
		mux.Handle("GET /ws", wsEcho(t))
		mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("plain")) })
		base := serve(t, mux)
		wsRoundTrip(t, "ws"+strings.TrimPrefix(base, "http")+"/ws")
		// A second connection works too, and plain HTTP is unaffected.
		wsRoundTrip(t, "ws"+strings.TrimPrefix(base, "http")+"/ws")
		do(t, client(t), "GET", base+"/plain", "").expect(t, 200, "plain")
		// A non-websocket request to the websocket route is refused by the
		// library with 400.
		res := do(t, client(t), "GET", base+"/ws", "")
		if res.status != 400 {
			t.Errorf("plain GET /ws: %d, want 400", res.status)
		}
	})
}
