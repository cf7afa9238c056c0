package riptide

import (
	"testing"

	"github.com/riptide-http/riptide/internal/h2"

	"golang.org/x/net/http2"
)

// BenchServeMem lets the external benchmarks serve a handler in memory
// (benchServeMem): routers and middleware import riptide, so their
// benchmarks against the engine live in package riptide_test.
func BenchServeMem(b *testing.B, h Handler, one string) { benchServeMem(b, h, one) }

// ServeTest, TestServer and TestServeOptions are serveTest and its types
// for the external tests: the one start-a-server helper of the root tests.
var ServeTest = serveTest

type (
	TestServer       = testServer
	TestServeOptions = testServeOptions
)

// SyncBuffer is syncBuffer for the external tests: a goroutine-safe log
// sink.
type SyncBuffer = syncBuffer

// AppendFrameHeader appends an HTTP/2 frame header, for the external tests
// that build raw frame sequences with x/net/http2's frame types and flags.
func AppendFrameHeader(b []byte, length int, typ http2.FrameType, flags http2.Flags, id uint32) []byte {
	return h2.AppendFrameHeader(b, length, h2.FrameType(typ), h2.Flags(flags), id)
}

// RequestHead returns the head the protocol's fill left for the request x
// serves (conn.head) and whether the request keeps the reqhead contract
// with it (reqhead.Head.Check), for TestRequestHeadContract.
func RequestHead(x *Ctx) ([]byte, bool) {
	h := x.conn.head
	return h.Bytes(), h.Check(&x.req)
}
