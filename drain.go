package riptide

// Draining for load balancers: a Server can stop being advertised (its
// readiness handler turns 503) and push its keep-alive clients away
// (Connection: close, GOAWAY) while still accepting, before Shutdown
// stops accepting; MaxConnAge makes long-lived connections reconnect so
// that load rebalances across a fleet.

import (
	"net/http"
	"time"

	"github.com/riptide-http/riptide/internal/clock"
)

// Drain starts draining without closing the listeners: the handlers of
// ReadyHandler and ReadyHTTPHandler answer 503 from now on, every HTTP/1.1
// response carries Connection: close and its connection closes after it,
// idle keep-alive connections are closed, and the HTTP/2 connections open
// now are sent GOAWAY and close when their streams are done. New connections are still
// served (one request each), so clients that have not yet heard from the
// balancer are not refused. Shutdown drains too; calling Drain first, and
// waiting for the balancer's health checks to notice, is the gentle way
// to take a server out of a fleet.
func (s *Server) Drain() {
	s.init()
	s.draining.Store(true)
	for _, cs := range s.connSets() {
		cs.drain(false)
	}
	s.closeIdle()
}

// Draining reports whether Drain or Shutdown has been called.
func (s *Server) Draining() bool { return s.draining.Load() }

// ReadyHandler returns a native handler for a readiness probe: 200 "ready"
// until draining starts (Drain or Shutdown), then 503 "draining".
func (s *Server) ReadyHandler() Handler {
	return HandlerFunc(func(x *Ctx) {
		x.SetHeader("Content-Type", "text/plain; charset=utf-8")
		x.SetHeader("Cache-Control", "no-store")
		if s.Draining() {
			x.SetStatus(503)
			x.WriteString("draining\n")
			return
		}
		x.WriteString("ready\n")
	})
}

// ReadyHTTPHandler is ReadyHandler for http.ServeMux and other net/http
// routers (the compat door).
func (s *Server) ReadyHTTPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if s.Draining() {
			w.WriteHeader(503)
			w.Write([]byte("draining\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
}

// tooOld reports whether the connection has outlived MaxConnAge (checked
// per request, in whole seconds of the server clock).
func (c *conn) tooOld() bool {
	age := c.cfg.maxAge
	return age > 0 && time.Duration(clock.Sec()-c.born)*time.Second >= age
}
