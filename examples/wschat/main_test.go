package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
)

// The page is served at /, and a message one client sends reaches every
// client in the room, the sender too.
func TestChat(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rm := newRoom()
	srv := &riptide.Server{Handler: rm.handler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := ln.Addr().String()

	resp, err := http.Get("http://" + base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "new WebSocket") {
		t.Errorf("page lacks its script: %q", body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var clients []*websocket.Conn
	for range 3 {
		c, _, err := websocket.Dial(ctx, "ws://"+base+"/ws", &websocket.Options{Compression: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	// Wait until the room holds all three, then talk.
	for {
		rm.mu.Lock()
		n := len(rm.conns)
		rm.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := clients[1].WriteMessage(websocket.TextMessage, []byte("hello, room")); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		_, msg, err := c.ReadMessage()
		if err != nil || string(msg) != "hello, room" {
			t.Errorf("client %d: %q, %v", i, msg, err)
		}
	}
}
