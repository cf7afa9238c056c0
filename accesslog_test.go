package riptide

import (
	"log/slog"
	"strings"
	"testing"
)

// TestAccessLog: one record per request with its fields when the level is
// enabled; nothing, and no allocation, when it is not.
func TestAccessLog(t *testing.T) {
	var out syncBuffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, addr := startServer(t, nil, AccessLog(logger, slog.LevelInfo, HandlerFunc(func(x *Ctx) {
		x.SetStatus(201)
		x.WriteString("Hello, World!")
	})).ServeCtx)
	rc := dial(t, addr)
	rc.send("GET /a?b=c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	rc.resp("GET")
	rc.closed() // the record is written before the connection closes
	line := out.String()
	for _, want := range []string{"msg=request", "method=GET", "target=\"/a?b=c\"", "status=201", "bytes=13", "remote=127.0.0.1:", "duration="} {
		if !strings.Contains(line, want) {
			t.Errorf("no %q in %q", want, line)
		}
	}
}

func TestAccessLogDisabledDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var out syncBuffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, addr := startServer(t, nil, AccessLog(logger, slog.LevelInfo, HandlerFunc(func(x *Ctx) {
		x.WriteString("Hello, World!")
	})).ServeCtx)
	ac := newAllocClient(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if n := testing.AllocsPerRun(1000, ac.roundTrip); n != 0 {
		t.Errorf("%v allocs per request with the access log disabled", n)
	}
	if out.String() != "" {
		t.Errorf("logged at a disabled level: %q", out.String())
	}
}
