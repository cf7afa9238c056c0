package riptide

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestServeValidatesConfig: a Server field holding a value it cannot mean
// fails Serve, ServeTLS and ListenAndServe at once with a *ConfigError that
// names the field and the value (they were accepted silently: Engine(42)
// served on the goroutine engine, -1 meant no limit or the default); the
// listener is closed; the zero values and the documented negatives
// (timeouts, MaxRequestBodySize) stay valid.
func TestServeValidatesConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		srv   *Server
		field string
		value string
	}{
		{&Server{Engine: Engine(42)}, "Engine", "42"},
		{&Server{Engine: Engine(-1)}, "Engine", "-1"},
		{&Server{MaxConns: -1}, "MaxConns", "-1"},
		{&Server{ReadBufferSize: -4096}, "ReadBufferSize", "-4096"},
		{&Server{WriteBufferSize: -1}, "WriteBufferSize", "-1"},
		{&Server{MaxHeaderBytes: -1}, "MaxHeaderBytes", "-1"},
		{&Server{MaxHeaderCount: -2}, "MaxHeaderCount", "-2"},
		{&Server{MaxRequestsPerConn: -1}, "MaxRequestsPerConn", "-1"},
		{&Server{MaxConnAge: -time.Second}, "MaxConnAge", "-1s"},
		{&Server{HTTP2: &HTTP2Config{MaxReadFrameSize: 100}}, "HTTP2.MaxReadFrameSize", "100"},
		{&Server{HTTP2: &HTTP2Config{MaxReadFrameSize: 1 << 24}}, "HTTP2.MaxReadFrameSize", "16777216"},
		{&Server{HTTP2: &HTTP2Config{MaxReceiveBufferPerConnection: -1}}, "HTTP2.MaxReceiveBufferPerConnection", "-1"},
		{&Server{HTTP2: &HTTP2Config{MaxReceiveBufferPerStream: -1}}, "HTTP2.MaxReceiveBufferPerStream", "-1"},
		{&Server{HTTP2: &HTTP2Config{SendPingTimeout: -1}}, "HTTP2.SendPingTimeout", "-1ns"},
		{&Server{HTTP2: &HTTP2Config{PingTimeout: -1}}, "HTTP2.PingTimeout", "-1ns"},
		{&Server{ProxyProtocol: &ProxyConfig{MaxHeaderBytes: -1}}, "ProxyProtocol.MaxHeaderBytes", "-1"},
		{&Server{Forwarded: &ForwardedConfig{Header: 7}}, "Forwarded.Header", "7"},
	} {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			check := func(how string, err error) {
				t.Helper()
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("%s = %v, want a *ConfigError", how, err)
				}
				if ce.Field != tc.field || !strings.Contains(err.Error(), "Server."+tc.field+" "+tc.value+":") {
					t.Fatalf("%s = %q, want it to name Server.%s %s", how, err, tc.field, tc.value)
				}
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.srv.Serve(ln) }()
			select {
			case err := <-done:
				check("Serve", err)
			case <-time.After(10 * time.Second):
				tc.srv.Close()
				t.Fatalf("Serve served with an invalid Server.%s", tc.field)
			}
			if _, err := ln.Accept(); err == nil {
				t.Error("Serve left the listener open")
			}
			check("ListenAndServe", tc.srv.ListenAndServe("127.0.0.1:0"))
			check("ListenAndServeTLS", tc.srv.ListenAndServeTLS("127.0.0.1:0", "", ""))
		})
	}

	// Valid values, at their edges, pass.
	for _, srv := range []*Server{
		{},
		{Engine: EngineOnLoop, ReadHeaderTimeout: -1, IdleTimeout: -1, WriteTimeout: -1, MaxRequestBodySize: -1},
		{HTTP2: &HTTP2Config{MaxReadFrameSize: 1<<24 - 1}, Forwarded: &ForwardedConfig{Header: HeaderForwarded}},
		{HTTP2: &HTTP2Config{MaxReadFrameSize: 1 << 14}, ProxyProtocol: &ProxyConfig{}},
	} {
		if err := srv.validate(); err != nil {
			t.Errorf("validate(%+v) = %v", srv, err)
		}
	}
}

// TestEngineFor: EngineFor reports the engine Serve runs, not the field:
// EngineAuto resolved, TLS on goroutines, a compat handler under
// EngineOnLoop on the event loop's workers. (Programs logged
// "engine=auto".)
func TestEngineFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	loop := platformEngine == EngineEventLoop
	ifLoop := func(e Engine) Engine {
		if loop {
			return e
		}
		return EngineGoroutine
	}
	tlsLn := tls.NewListener(ln, &tls.Config{})
	compat := FromHTTP(nil)
	for _, tc := range []struct {
		srv  *Server
		ln   net.Listener
		want Engine
	}{
		{&Server{}, ln, ifLoop(autoEngine)},
		{&Server{Engine: EngineGoroutine}, ln, EngineGoroutine},
		{&Server{Engine: EngineEventLoop}, ln, ifLoop(EngineEventLoop)},
		{&Server{Engine: EngineOnLoop}, ln, ifLoop(EngineOnLoop)},
		{&Server{Engine: EngineOnLoop, Handler: compat}, ln, ifLoop(EngineEventLoop)},
		{&Server{Engine: EngineEventLoop}, tlsLn, EngineGoroutine},
		{&Server{Engine: EngineEventLoop, ProxyProtocol: &ProxyConfig{}}, ln, EngineGoroutine},
	} {
		if got := tc.srv.EngineFor(tc.ln); got != tc.want {
			t.Errorf("Engine %v, Handler %T, listener %T: EngineFor = %v, want %v", tc.srv.Engine, tc.srv.Handler, tc.ln, got, tc.want)
		}
		if got := tc.srv.EngineFor(tc.ln); got == EngineAuto {
			t.Errorf("EngineFor = auto")
		}
	}
}
