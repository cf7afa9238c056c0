package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/riptide-http/riptide"
)

// -engine takes every riptide.Engine by name and rejects anything else;
// the engine it names is the one that serves: on Linux the goroutine
// engine hands the handler's connection over as a *net.TCPConn, the event
// loop as its own connection type.
func TestEngineFlag(t *testing.T) {
	for _, bad := range []string{"", "epoll", "Goroutine"} {
		if _, err := parseEngine(bad); err == nil {
			t.Errorf("parseEngine(%q) accepted", bad)
		}
	}
	for _, name := range []string{"auto", "eventloop", "goroutine", "onloop"} {
		t.Run(name, func(t *testing.T) {
			e, err := parseEngine(name)
			if err != nil || e.String() != name {
				t.Fatalf("parseEngine(%q) = %v, %v", name, e, err)
			}
			connType := make(chan string, 1)
			srv := &riptide.Server{Engine: e, Handler: newRouter(), ConnState: func(nc net.Conn, st riptide.ConnState) {
				if st == riptide.StateActive {
					select {
					case connType <- fmt.Sprintf("%T", nc):
					default:
					}
				}
			}}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(ln)
			defer srv.Close()
			res, err := http.Get("http://" + ln.Addr().String() + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(body) != "Hello, World!" {
				t.Errorf("GET / = %q", body)
			}
			got := <-connType
			onGoroutines := e == riptide.EngineGoroutine || runtime.GOOS != "linux"
			if (got == "*net.TCPConn") != onGoroutines {
				t.Errorf("-engine %s served on a %s", name, got)
			}
		})
	}
}

// With -tls the example logs the https URL it serves.
func TestListenURL(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}
	if got := listenURL(addr, true); got != "https://127.0.0.1:8443" {
		t.Errorf("listenURL(tls) = %q", got)
	}
	if got := listenURL(addr, false); got != "http://127.0.0.1:8443" {
		t.Errorf("listenURL = %q", got)
	}
}
