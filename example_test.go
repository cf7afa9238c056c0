package riptide_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

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

// A JSON API on the native door: BindJSON answers bad input itself (400,
// 413, 415), JSON answers the result, and Server.ErrorHandler gives every
// error, those of the router and middleware included, the same JSON shape.
func ExampleCtx_BindJSON() {
	type item struct {
		Name string `json:"name"`
	}
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			var in item
			if c.BindJSON(&in) != nil {
				return // answered already
			}
			c.JSON(201, &in)
		}),
		ErrorHandler: func(c *riptide.Ctx, code int, msg string) {
			c.JSON(code, &struct {
				Error string `json:"error"`
			}{msg})
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	for _, tc := range []struct{ ctype, body string }{
		{"application/json", `{"name":"kite"}`},
		{"application/json", `{"name":`},
		{"text/plain", `kite`},
	} {
		res, err := http.Post("http://"+ln.Addr().String()+"/items", tc.ctype, strings.NewReader(tc.body))
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Printf("%d %s", res.StatusCode, b)
	}
	// Output:
	// 201 {"name":"kite"}
	// 400 {"error":"Bad Request: unexpected end of JSON input"}
	// 415 {"error":"Unsupported Media Type: want application/json"}
}

// Per-request values: middleware stores them with SetLocal, the handler
// reads them with Local, and code given the Ctx as a context.Context finds
// them with Value.
func ExampleCtx_SetLocal() {
	type tenantKey struct{}
	tenant := func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.SetLocal(tenantKey{}, c.HeaderString("X-Tenant"))
			next.ServeCtx(c)
		})
	}
	lookup := func(ctx context.Context) string { return "tenant " + ctx.Value(tenantKey{}).(string) }
	srv := &riptide.Server{Handler: tenant(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.WriteString(lookup(c))
	}))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
	req.Header.Set("X-Tenant", "acme")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(string(b))
	// Output: tenant acme
}
