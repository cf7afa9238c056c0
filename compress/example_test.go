package compress_test

import (
	"log"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/compress"
)

// A JSON API whose responses are compressed for clients that accept it,
// brotli and gzip only, gzip at its fastest level.
func Example() {
	api := riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("application/json")
		c.WriteString(`{"items":[]}`)
	})
	gz := compress.New(compress.Config{
		Encodings: []compress.Encoding{compress.Brotli, compress.Gzip},
		GzipLevel: 1,
	})
	srv := &riptide.Server{Handler: gz(api)}
	log.Fatal(srv.ListenAndServe("127.0.0.1:8080"))
}

// Server-sent events through the compressor: each Flush sends the event
// compressed, without waiting for the rest of the stream.
func ExampleNew_sse() {
	events := riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/event-stream")
		for _, ev := range []string{"one", "two", "three"} {
			c.WriteString("data: " + ev + "\n\n")
			c.Flush()
		}
	})
	_ = &riptide.Server{Handler: compress.New(compress.Config{})(events)}
}
