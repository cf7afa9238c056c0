package riptide_test

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/riptide-http/riptide"
)

// An http.Handler served with CompatOptions.ReuseRequests: the handler
// keeps nothing of the request or the response Header map after it
// returns (it copies the one value it needs, a string, which may be
// kept), so the compat door may reuse them for the connection's next
// request.
func ExampleFromHTTPWith() {
	mux := http.NewServeMux()
	var lastAgent string // a string read from the request may be kept
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		lastAgent = r.Header.Get("User-Agent")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Hello, %s", r.PathValue("name"))
	})
	srv := &riptide.Server{Handler: riptide.FromHTTPWith(mux, riptide.CompatOptions{ReuseRequests: true})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	for _, name := range []string{"riptide", "gopher"} {
		res, err := http.Get("http://" + ln.Addr().String() + "/hello/" + name)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Println(res.Status, string(body))
	}
	fmt.Println(lastAgent)
	// Output:
	// 200 OK Hello, riptide
	// 200 OK Hello, gopher
	// Go-http-client/1.1
}
