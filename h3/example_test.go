package h3_test

import (
	"fmt"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
)

// A request stream's HEADERS frame, read and turned into an h1.Request;
// then the response head encoded into a reused buffer.
func Example() {
	// What a client sends on a request stream.
	p := h3.AppendFieldSectionPrefix(nil)
	p = h3.AppendField(p, ":method", "GET", true)
	p = h3.AppendField(p, ":scheme", "https", true)
	p = h3.AppendField(p, ":authority", "example.com", true)
	p = h3.AppendField(p, ":path", "/hello?name=riptide", true)
	p = h3.AppendField(p, "user-agent", "example/1.0", true)
	stream := append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(p))), p...)

	// The server's side, with buffers it keeps per connection.
	var rs h3.RequestStream
	fields := make([]h3.Field, 0, 64)
	buf := make([]byte, 0, 16<<10)
	fh, n, err := h3.ParseFrameHeader(stream)
	if err != nil {
		panic(err) // h3.ErrNeedMore: read more of the stream
	}
	part, err := rs.Check(fh, nil)
	fmt.Println(part == h3.PartHeaders, err)
	fields, _, err = h3.DecodeFieldSection(fields, buf, stream[n:n+int(fh.Length)], 16<<10)
	if err != nil {
		panic(err) // a connection error: close with h3.CodeOf(err)
	}
	var head h3.RequestHead
	if err := head.Parse(fields, false); err != nil {
		panic(err) // malformed: reset the stream with H3_MESSAGE_ERROR
	}
	var req h1.Request
	if err := head.Build(&req); err != nil {
		panic(err)
	}
	fmt.Printf("%s %s host=%s query=%s ua=%s\n", req.Method, req.Path, req.Host, req.Query, req.Get("User-Agent"))

	out := h3.AppendFieldSectionPrefix(nil)
	out = h3.AppendStatus(out, 200)
	out = h3.AppendField(out, "Content-Type", "text/html; charset=utf-8", true) // static entry 52
	fmt.Printf("% x\n", out)
	// Output:
	// true <nil>
	// GET /hello host=example.com query=name=riptide ua=example/1.0
	// 00 00 d9 f4
}
