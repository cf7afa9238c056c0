package listen_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/listen"
)

// A server that restarts on SIGHUP without dropping a connection.
func ExampleHandoff() {
	h, err := listen.NewHandoff()
	if err != nil {
		panic(err)
	}
	ln, err := h.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		panic(err)
	}
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("hello\n") })}
	go srv.Serve(ln)
	h.Ready() // the previous process, if any, stops accepting now

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	for range hup {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := h.Restart(ctx)
		cancel()
		if err == nil {
			break // the new process is accepting
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.Shutdown(ctx) // stop accepting, finish in-flight requests, close keep-alive connections
}

// Several processes serving one port, the kernel spreading connections.
func ExampleReusePort() {
	ln, err := listen.ReusePort(context.Background(), "tcp", "127.0.0.1:8080")
	if err != nil {
		panic(err)
	}
	srv := &riptide.Server{}
	go srv.Serve(ln)
}
