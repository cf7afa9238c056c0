package riptide

import (
	"fmt"
	"net"
)

// ConfigError is the error Serve, ServeTLS, ListenAndServe,
// ListenAndServeTLS (and the http3 module's Serve) return, before serving
// anything, when a Server field holds a value it cannot mean: an unknown
// Engine, a negative size or count, an HTTP/2 frame size outside the
// protocol's range. The zero value of every field is valid.
type ConfigError struct {
	// Field is the field's name as written in Go, e.g. "MaxConns" or
	// "HTTP2.MaxReadFrameSize".
	Field string
	// Value is the field's value.
	Value any
	// Reason says what the field accepts.
	Reason string
}

// Error returns e.g. `riptide: invalid Server.MaxConns -1: want 0 (no
// limit) or more`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("riptide: invalid Server.%s %v: %s", e.Field, e.Value, e.Reason)
}

// validate checks every Server field that can hold a meaningless value
// and returns a *ConfigError for the first one, nil if all are valid.
func (s *Server) validate() error {
	bad := func(field string, v any, reason string) error {
		return &ConfigError{Field: field, Value: v, Reason: reason}
	}
	if s.Engine < EngineAuto || s.Engine > EngineOnLoop {
		return bad("Engine", int(s.Engine), "want EngineAuto, EngineGoroutine, EngineEventLoop or EngineOnLoop")
	}
	if s.TLSEngine < EngineAuto || s.TLSEngine > EngineOnLoop {
		return bad("TLSEngine", int(s.TLSEngine), "want EngineAuto, EngineGoroutine, EngineEventLoop or EngineOnLoop")
	}
	const nonNeg = "want 0 (the default) or more"
	for _, f := range [...]struct {
		name string
		v    int
	}{
		{"MaxHeaderBytes", s.MaxHeaderBytes},
		{"MaxHeaderCount", s.MaxHeaderCount},
		{"ReadBufferSize", s.ReadBufferSize},
		{"WriteBufferSize", s.WriteBufferSize},
	} {
		if f.v < 0 {
			return bad(f.name, f.v, nonNeg)
		}
	}
	const noLimit = "want 0 (no limit) or more"
	if s.MaxConns < 0 {
		return bad("MaxConns", s.MaxConns, noLimit)
	}
	if s.MaxRequestsPerConn < 0 {
		return bad("MaxRequestsPerConn", s.MaxRequestsPerConn, noLimit)
	}
	if s.MaxConnAge < 0 {
		return bad("MaxConnAge", s.MaxConnAge, noLimit)
	}
	if h := s.HTTP2; h != nil {
		if f := h.MaxReadFrameSize; f != 0 && (f < 1<<14 || f > 1<<24-1) {
			return bad("HTTP2.MaxReadFrameSize", f, "want 0 (16384) or 16384 to 16777215 (RFC 9113 §6.5.2)")
		}
		if h.MaxReceiveBufferPerConnection < 0 {
			return bad("HTTP2.MaxReceiveBufferPerConnection", h.MaxReceiveBufferPerConnection, nonNeg)
		}
		if h.MaxReceiveBufferPerStream < 0 {
			return bad("HTTP2.MaxReceiveBufferPerStream", h.MaxReceiveBufferPerStream, nonNeg)
		}
		if h.SendPingTimeout < 0 {
			return bad("HTTP2.SendPingTimeout", h.SendPingTimeout, "want 0 (no pings) or more")
		}
		if h.PingTimeout < 0 {
			return bad("HTTP2.PingTimeout", h.PingTimeout, nonNeg)
		}
	}
	if p := s.ProxyProtocol; p != nil && p.MaxHeaderBytes < 0 {
		return bad("ProxyProtocol.MaxHeaderBytes", p.MaxHeaderBytes, nonNeg)
	}
	if f := s.Forwarded; f != nil && f.Header > HeaderForwarded {
		return bad("Forwarded.Header", int(f.Header), "want HeaderXForwardedFor or HeaderForwarded")
	}
	return nil
}

// configErr is the Server's configuration error, nil when valid: checked
// once, with the rest of init.
func (s *Server) configErr() error {
	s.init()
	return s.cfgErr
}

// EngineFor returns the engine Serve(ln) runs ln's connections on: Engine
// with EngineAuto resolved for this platform and listener, and the
// goroutine engine wherever the event loop cannot serve (TLS and other
// listeners that are not a *net.TCPListener, the PROXY protocol,
// platforms other than Linux).
// An EngineOnLoop server whose Handler is a compat one (FromHTTP) reports
// EngineEventLoop, which is what it runs. Use it in the line a program
// logs when it starts listening, rather than the Engine field.
func (s *Server) EngineFor(ln net.Listener) Engine {
	e := s.engine()
	_, tcp := ln.(*net.TCPListener)
	if !tcp || s.ProxyProtocol != nil || platformEngine != EngineEventLoop || e == EngineGoroutine {
		return EngineGoroutine
	}
	if _, compat := s.Handler.(compatHandler); compat && e == EngineOnLoop {
		return EngineEventLoop
	}
	return e
}
