//go:build !linux

package riptide

// elH2 serves HTTP/2 on the event loop, which this platform lacks.
func (c *conn) elH2([]byte, bool) bool { return false }
