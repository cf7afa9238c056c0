// Package fastroutes builds the benchmark and probe routes as a
// valyala/fasthttp request handler, with the same status codes, headers and
// bodies as package stdroutes.
package fastroutes

import (
	"encoding/json"
	"sort"

	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Handler returns the fasthttp handler for the routes of profile p.
func Handler(p benchserver.Profile) fasthttp.RequestHandler {
	switch p {
	case benchserver.ProfileProbe:
		return probe
	case benchserver.ProfileRouted:
		return routed()
	case benchserver.ProfileStatic:
		// fasthttp.FS with its defaults (files cached for 10 s, no
		// compression, no byte ranges).
		fs := &fasthttp.FS{Root: benchserver.DefaultStaticDir()}
		return fs.NewRequestHandler()
	}
	return bench
}

var helloBytes = []byte(benchserver.Hello)

func bench(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path()) // the compiler does not allocate for a switch on string(b)
	switch {
	case path == "/" && ctx.IsGet():
		plaintext(ctx)
	case path == "/json" && ctx.IsGet():
		b, err := json.Marshal(benchserver.HelloMessage)
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(b)
	case path == "/echo" && ctx.IsPost():
		ctx.SetContentType("application/octet-stream")
		ctx.SetBody(ctx.PostBody())
	case path == "/64k" && ctx.IsGet():
		ctx.SetContentType("application/octet-stream")
		ctx.SetBody(benchserver.Body64K)
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
	}
}

func plaintext(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBody(helloBytes)
}

func probe(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	switch {
	case path == "/" && (ctx.IsGet() || ctx.IsHead()):
		plaintext(ctx)
	case path == "/" && ctx.IsOptions():
		ctx.Response.Header.Set("Allow", "GET, HEAD, OPTIONS, POST")
	case path == "/" && ctx.IsPost():
		ctx.SetContentType("application/octet-stream")
		ctx.SetBody(ctx.PostBody())
	case path == "/echo": // any method: Http11Probe cookie checks send GET /echo
		echoHeaders(ctx)
	case path == "/cookie" && ctx.IsGet():
		var buf []byte
		for k, v := range ctx.Request.Header.Cookies() {
			buf = append(buf, k...)
			buf = append(buf, '=')
			buf = append(buf, v...)
			buf = append(buf, '\n')
		}
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBody(buf)
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
	}
}

// echoHeaders writes Host and the other request headers as "Name: Value"
// lines, names sorted, like stdroutes does.
func echoHeaders(ctx *fasthttp.RequestCtx) {
	type kv struct{ k, v string }
	var hs []kv
	for k, v := range ctx.Request.Header.All() {
		name := string(k)
		if name == "Host" {
			continue
		}
		hs = append(hs, kv{name, string(v)})
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].k < hs[j].k })
	buf := append([]byte("Host: "), ctx.Host()...)
	buf = append(buf, '\n')
	for _, h := range hs {
		buf = append(buf, h.k...)
		buf = append(buf, ": "...)
		buf = append(buf, h.v...)
		buf = append(buf, '\n')
	}
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBody(buf)
}
