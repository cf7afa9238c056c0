package riptide

import "io"

// A BodyFilter stands between a handler and its response body: while one
// is set with [Ctx.SetBodyFilter], Ctx.Write and Ctx.WriteString hand their
// bytes to the filter's Write and Ctx.Flush calls the filter's Flush. The
// filter passes on what it produces with [Ctx.WriteUnfiltered] and
// [Ctx.FlushUnfiltered] (or to the filter it replaced, to stack filters).
// Middleware uses it to transform a body on the fly, e.g. to compress it
// (package github.com/riptide-http/riptide/compress).
//
// Write must not retain p once it returns (it may be a string's bytes, so
// it must not modify p either). Flush must pass everything the filter holds
// on before it returns: Flush is how a streaming handler (server-sent
// events) makes its bytes reach the client now.
//
// The filter is not called when the handler returns: the middleware that
// set it finishes it (writes what it still holds, unfiltered) before it
// returns in turn, and removes it. Response header fields may still be set
// from Write or Flush as long as the response is not committed (see
// [Ctx.Committed]): the filter sees the body before the head is sent.
//
// Only the native door's Ctx.Write, WriteString and Flush go through the
// filter; the compat door's http.ResponseWriter writes the body directly.
type BodyFilter interface {
	io.Writer
	Flush() error
}

// SetBodyFilter routes the response body through f (nil removes the
// filter). The filter is cleared before every request; a middleware that
// sets one keeps the previous filter (BodyFilter) if it wants to chain to
// it and restores it when done.
func (x *Ctx) SetBodyFilter(f BodyFilter) { x.filter = f }

// BodyFilter returns the filter set with SetBodyFilter, or nil.
func (x *Ctx) BodyFilter() BodyFilter { return x.filter }

// WriteUnfiltered is Write without the body filter: the bytes go straight
// to the response (buffered, or streamed once committed). A BodyFilter
// writes its output with it.
func (x *Ctx) WriteUnfiltered(p []byte) (int, error) { return x.write(p) }

// FlushUnfiltered is Flush without the body filter: it commits the head if
// needed and sends everything buffered.
func (x *Ctx) FlushUnfiltered() error { return x.flush() }
