package riptide_test

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/riptide-http/riptide"
)

// A native handler: read the request through zero-copy accessors, set the
// status and headers, write the body.
func Example() {
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("text/plain; charset=utf-8")
		c.WriteString("Hello, ")
		c.Write(c.QueryArg("name"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	res, err := http.Get("http://" + ln.Addr().String() + "/?name=riptide")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.Status, string(body))
	// Output: 200 OK Hello, riptide
}
