package middleware_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/middleware"
	"github.com/riptide-http/riptide/router"
)

func Example() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	r := router.New()
	r.Use(
		middleware.Recover(logger),
		middleware.AccessLog(logger, slog.LevelDebug, nil), // Debug is disabled here: no cost
		middleware.RequestID(),
		middleware.CORS(middleware.CORSOptions{AllowedOrigins: []string{"https://app.example"}}),
		middleware.Timeout(5*time.Second),
	)
	r.HandleFunc("GET /hello", func(c *riptide.Ctx) { c.WriteString("hello") })
	admin := r.Group("/admin", middleware.BasicAuth("admin", middleware.Users(map[string]string{"ann": "secret"})))
	admin.HandleFunc("GET /stats", func(c *riptide.Ctx) { c.WriteString("stats") })

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &riptide.Server{Handler: r}
	go srv.Serve(ln)
	defer srv.Close()

	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/hello", nil)
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body), resp.Header.Get("Access-Control-Allow-Origin"), len(resp.Header.Get("X-Request-Id")))

	resp, err = http.Get("http://" + ln.Addr().String() + "/admin/stats")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	// Output:
	// 200 hello https://app.example 33
	// 401 Basic realm="admin", charset="UTF-8"
}

// BasicAuth on a group: the handler learns who logged in, and paths of the
// group that no route serves ask for credentials too (the group owns its
// prefix), so a stranger cannot tell which exist.
func ExampleBasicAuthUser() {
	r := router.New()
	admin := r.Group("/admin", middleware.BasicAuth("admin", middleware.Users(map[string]string{"ann": "secret"})))
	admin.HandleFunc("GET", func(c *riptide.Ctx) { // the bare prefix, /admin
		c.WriteString("hello " + middleware.BasicAuthUser(c))
	})

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &riptide.Server{Handler: r}
	go srv.Serve(ln)
	defer srv.Close()

	for _, tc := range []struct{ path, user string }{{"/admin", "ann"}, {"/admin/secret-plans", ""}, {"/admin/secret-plans", "ann"}} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+tc.path, nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, "secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s as %q: %d %q\n", tc.path, tc.user, resp.StatusCode, body)
	}
	// Output:
	// /admin as "ann": 200 "hello ann"
	// /admin/secret-plans as "": 401 "Unauthorized\n"
	// /admin/secret-plans as "ann": 404 "404 page not found\n"
}
