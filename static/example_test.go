package static_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/router"
	"github.com/riptide-http/riptide/static"
)

func Example() {
	dir, _ := os.MkdirTemp("", "public")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>home</h1>"), 0o644)
	os.WriteFile(filepath.Join(dir, "app.js"), []byte("console.log('hi')"), 0o644)

	files, err := static.New(dir, static.Options{
		StripPrefix: "/assets", // /assets/app.js is <dir>/app.js
		CacheControl: []static.CacheRule{
			{Ext: ".js", Value: "public, max-age=3600"},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer files.Close()
	r := router.New()
	r.Handle("GET /assets/{path...}", files) // GET routes also serve HEAD

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &riptide.Server{Handler: r}
	go srv.Serve(ln)
	defer srv.Close()

	for _, path := range []string{"/assets/", "/assets/app.js", "/assets/../go.mod", "/assets/missing"} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+path, nil)
		req.URL.Opaque = path // sent as written, ".." included
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %s %q %q\n", path, resp.StatusCode, resp.Header.Get("Content-Type"),
			resp.Header.Get("Cache-Control"), body)
	}
	// Output:
	// /assets/: 200 text/html; charset=utf-8 "" "<h1>home</h1>"
	// /assets/app.js: 200 text/javascript; charset=utf-8 "public, max-age=3600" "console.log('hi')"
	// /assets/../go.mod: 404 text/plain; charset=utf-8 "" "404 page not found\n"
	// /assets/missing: 404 text/plain; charset=utf-8 "" "404 page not found\n"
}
