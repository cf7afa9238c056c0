package router_test

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/router"
)

func Example() {
	r := router.New()
	r.HandleFunc("GET /users/{id}", func(c *riptide.Ctx) {
		c.SetContentType("text/plain")
		c.WriteString("user ")
		c.Write(c.PathValue("id")) // no allocation: a slice of the request
	})
	r.HandleFunc("GET /static/{file...}", func(c *riptide.Ctx) {
		c.WriteString("file ")
		c.Write(c.PathValue("file"))
	})
	api := r.Group("/api") // a prefix, and middleware if any
	api.HandleFunc("POST /items", func(c *riptide.Ctx) { c.SetStatus(201) })

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &riptide.Server{Handler: r}
	go srv.Serve(ln)
	defer srv.Close()

	for _, path := range []string{"/users/42", "/static/css/site.css", "/api/items", "/nowhere"} {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %q Allow=%q\n", path, resp.StatusCode, body, resp.Header.Get("Allow"))
	}
	// Output:
	// /users/42: 200 "user 42" Allow=""
	// /static/css/site.css: 200 "file css/site.css" Allow=""
	// /api/items: 405 "Method Not Allowed\n" Allow="OPTIONS, POST"
	// /nowhere: 404 "404 page not found\n" Allow=""
}
