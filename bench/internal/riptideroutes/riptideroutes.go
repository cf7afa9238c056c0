// Package riptideroutes builds the benchmark and probe routes on riptide's
// native API (func(*riptide.Ctx)), with the same status codes, headers and
// bodies as package stdroutes.
package riptideroutes

import (
	"encoding/json"
	"sort"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/static"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Handler returns the riptide handler for the routes of profile p.
func Handler(p benchserver.Profile) riptide.Handler {
	switch p {
	case benchserver.ProfileProbe:
		return riptide.HandlerFunc(probe)
	case benchserver.ProfileRouted:
		return routed()
	case benchserver.ProfileStatic:
		// riptide's static package with its defaults.
		h, err := static.New(benchserver.DefaultStaticDir(), static.Options{})
		if err != nil {
			panic(err)
		}
		return h
	}
	return riptide.HandlerFunc(bench)
}

var helloBytes = []byte(benchserver.Hello)

func bench(c *riptide.Ctx) {
	method, path := string(c.Method()), string(c.Path()) // no allocation: compared, not kept
	switch {
	case path == "/" && method == "GET":
		plaintext(c)
	case path == "/json" && method == "GET":
		b, err := json.Marshal(benchserver.HelloMessage)
		if err != nil {
			c.SetStatus(500)
			return
		}
		c.SetContentType("application/json")
		c.Write(b)
	case path == "/echo" && method == "POST":
		b, err := c.ReadBody()
		if err != nil {
			c.SetStatus(400)
			return
		}
		c.SetContentType("application/octet-stream")
		c.Write(b)
	case path == "/64k" && method == "GET":
		c.SetContentType("application/octet-stream")
		c.SetContentLength(int64(len(benchserver.Body64K)))
		c.Write(benchserver.Body64K)
	default:
		c.SetStatus(404)
	}
}

func plaintext(c *riptide.Ctx) {
	c.SetContentType("text/plain; charset=utf-8")
	c.Write(helloBytes)
}

func probe(c *riptide.Ctx) {
	method, path := string(c.Method()), string(c.Path())
	switch {
	case path == "/" && (method == "GET" || method == "HEAD"):
		plaintext(c)
	case path == "/" && method == "OPTIONS":
		c.SetHeader("Allow", "GET, HEAD, OPTIONS, POST")
	case path == "/" && method == "POST":
		b, err := c.ReadBody()
		if err != nil {
			c.SetStatus(400)
			return
		}
		c.SetContentType("application/octet-stream")
		c.Write(b)
	case path == "/echo": // any method: Http11Probe cookie checks send GET /echo
		echoHeaders(c)
	case path == "/cookie" && method == "GET":
		var buf []byte
		for k, v := range c.Cookies() {
			buf = append(buf, k...)
			buf = append(buf, '=')
			buf = append(buf, v...)
			buf = append(buf, '\n')
		}
		c.SetContentType("text/plain; charset=utf-8")
		c.Write(buf)
	default:
		c.SetStatus(404)
	}
}

// echoHeaders writes Host and the other request headers as "Name: Value"
// lines, names sorted, like stdroutes does.
func echoHeaders(c *riptide.Ctx) {
	type kv struct{ k, v string }
	var hs []kv
	for _, h := range c.Request().Headers {
		if string(h.Name) != "Host" {
			hs = append(hs, kv{string(h.Name), string(h.Value)})
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].k < hs[j].k })
	buf := append([]byte("Host: "), c.Host()...)
	buf = append(buf, '\n')
	for _, h := range hs {
		buf = append(buf, h.k...)
		buf = append(buf, ": "...)
		buf = append(buf, h.v...)
		buf = append(buf, '\n')
	}
	c.SetContentType("text/plain; charset=utf-8")
	c.Write(buf)
}
