package client_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/riptide-http/riptide/client"
)

// serve starts a tiny HTTP/1.1 server for the examples and returns its
// base URL.
func serve() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
	}))
	return "http://" + ln.Addr().String()
}

func ExampleClient_Do() {
	base := serve()
	var c client.Client
	var req client.Request
	var resp client.Response
	if err := req.SetURL(base + "/hello"); err != nil {
		panic(err)
	}
	// The same Request and Response serve every iteration: no allocation
	// per request once the connection is pooled.
	for i := 0; i < 3; i++ {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			panic(err)
		}
	}
	fmt.Println(resp.StatusCode(), string(resp.Body()))
	// Output: 200 GET /hello
}

func ExampleClient_Do_post() {
	base := serve()
	c := &client.Client{MaxConnsPerHost: 16}
	var req client.Request
	var resp client.Response
	req.SetURL(base + "/items")
	req.SetMethod("POST")
	req.AddHeader("Content-Type", "text/plain")
	req.SetBodyString("a new item")
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		panic(err)
	}
	fmt.Println(string(resp.Body()))
	// Output: POST /items a new item
}

func ExampleClient_DoStream() {
	base := serve()
	var c client.Client
	var req client.Request
	var resp client.Response
	req.SetURL(base + "/stream")
	req.SetMethod("PUT")
	req.SetBodyStream(strings.NewReader("streamed up"), -1) // chunked
	if err := c.DoStream(context.Background(), &req, &resp); err != nil {
		panic(err)
	}
	body := resp.BodyStream()
	defer body.Close() // returns the connection to the pool
	b, _ := io.ReadAll(body)
	fmt.Println(string(b))
	// Output: PUT /stream streamed up
}

func ExampleClient_RoundTrip() {
	base := serve()
	hc := &http.Client{Transport: &client.Client{}}
	resp, err := hc.Get(base + "/via-net-http")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output: 200 OK GET /via-net-http
}
