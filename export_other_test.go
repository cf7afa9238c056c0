//go:build !linux

package riptide

import "time"

// H2ParkWatch returns a channel that is never closed: HTTP/2 connections
// park only on the event loop (Linux).
func H2ParkWatch(string) <-chan struct{} { return make(chan struct{}) }

// H2Parks reports false: there is no event loop here.
func H2Parks() bool { return false }

// H2TLSParks reports false: there is no event loop here.
func H2TLSParks() bool { return false }

// SetH2ParkDelay does nothing here: there is no event loop.
func (s *Server) SetH2ParkDelay(time.Duration) {}
