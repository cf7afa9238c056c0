package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Kind says how a server is built and launched.
type Kind int

const (
	// KindGo is a Go main package under bench/servers.
	KindGo Kind = iota
	// KindCeiling is the C epoll responder in bench/ceiling, built with cc.
	KindCeiling
	// KindNginx is the system nginx with a generated configuration.
	KindNginx
	// KindH2O is the system h2o with a generated configuration (HTTP/2
	// workloads only; h2peers.go).
	KindH2O
	// KindNghttpd is nghttp2's nghttpd (HTTP/2 workloads only; h2peers.go).
	KindNghttpd
)

// Server describes one server under test.
type Server struct {
	// Name is the identifier used by -servers, in file names and in reports.
	Name string
	// Desc is a one-line description for reports.
	Desc string
	// Kind says how the server is built and started.
	Kind Kind
	// Pkg is the Go package directory relative to the bench module root
	// (KindGo only).
	Pkg string
	// Optional servers are skipped, not failed, when their tool is missing.
	Optional bool
	// Probe reports whether the server implements the probe profile.
	Probe bool
	// Default servers run when -servers is not given.
	Default bool
	// HTTP2 servers accept -h2c and -tls and so run the HTTP/2 workloads.
	HTTP2 bool
	// H2Only servers run only the HTTP/2 workloads: HTTP/2 reference
	// peers, and variants that differ from another server only there.
	H2Only bool
	// Bin is the binary when it is not Name: a variant of another server
	// (KindGo only; Pkg's directory name).
	Bin string
	// Args are extra server flags, e.g. the riptide engine of a variant.
	Args []string
	// HTTP3 servers speak HTTP/3 only (a UDP socket, benchserver.MainH3)
	// and run only the HTTP/3 workloads.
	HTTP3 bool
	// WS servers serve the WebSocket routes of bench/internal/wsserver
	// and run only the WebSocket workloads.
	WS bool
	// TLSOnly servers run only the workloads over TLS: variants that
	// differ from another server only there (riptide-tlsloop).
	TLSOnly bool
}

// Baseline and Reference are the servers ratios are computed against.
const (
	Baseline  = "nethttp"
	Reference = "fasthttp"
)

// Registry returns every known server in report order. Adding a Go server
// is one entry here plus its main package under bench/servers/<name>.
func Registry() []Server {
	return []Server{
		{Name: "riptide", Desc: "riptide native API (func(*riptide.Ctx)), default engine (the event loop on Linux)", Kind: KindGo, Pkg: "./servers/riptide", Probe: true, Default: true, HTTP2: true},
		{Name: "riptide-nostats", Desc: "riptide native API with Server.DisableStats (the statistics' cost, beside riptide)", Kind: KindGo, Pkg: "./servers/riptide-nostats", Probe: true, HTTP2: true},
		{Name: "riptide-mux", Desc: "riptide compat door (riptide.FromHTTP) with http.ServeMux", Kind: KindGo, Pkg: "./servers/riptide-mux", Probe: true, Default: true, HTTP2: true},
		{Name: "riptide-mux-reuse", Desc: "riptide compat door with http.ServeMux and riptide.CompatOptions.ReuseRequests (-reuse): request objects reused, beside riptide-mux", Kind: KindGo, Pkg: "./servers/riptide-mux", Bin: "riptide-mux", Args: []string{"-reuse"}, Probe: true, HTTP2: true},
		{Name: "riptide-floor", Desc: "riptide native API plus, per request, what net/http's contract makes any server of an http.Handler build (fresh Request, URL, strings, Header maps; the handlers' own allocations): the lower bound of the compat door's cost (bench/internal/floorroutes)", Kind: KindGo, Pkg: "./servers/riptide-floor", HTTP2: true},
		{Name: "riptide-tlsloop", Desc: "riptide native API with TLS on the event loop (-tlsengine eventloop, Server.TLSEngine); not in the default set: run it beside riptide with -workloads tls,idletls,h2tls,h2idletls; TLS workloads only", Kind: KindGo, Pkg: "./servers/riptide", Bin: "riptide", Args: []string{"-tlsengine", "eventloop"}, Probe: true, HTTP2: true, TLSOnly: true},
		{Name: "riptide-tlsgoroutine", Desc: "riptide native API with TLS on the goroutine engine (-tlsengine goroutine, Server.TLSEngine: EngineGoroutine; riptide itself runs TLS on the event loop since 2026-12-07); not in the default set: run it beside riptide (or riptide-tlsloop) with -workloads tls,idletls,h2tls,h2idletls; TLS workloads only", Kind: KindGo, Pkg: "./servers/riptide", Bin: "riptide", Args: []string{"-tlsengine", "goroutine"}, Probe: true, HTTP2: true, TLSOnly: true},
		{Name: "riptide-go", Desc: "riptide native API on the goroutine engine (-engine goroutine)", Kind: KindGo, Pkg: "./servers/riptide", Bin: "riptide", Args: []string{"-engine", "goroutine"}, Probe: true, Default: true, HTTP2: true},
		{Name: "riptide-onloop", Desc: "riptide native API with riptide.EngineOnLoop (-engine onloop): handlers run on the event loop, no hand-off", Kind: KindGo, Pkg: "./servers/riptide", Bin: "riptide", Args: []string{"-engine", "onloop"}, Probe: true, Default: true, HTTP2: true},
		{Name: "riptide-mux-go", Desc: "riptide compat door with http.ServeMux on the goroutine engine", Kind: KindGo, Pkg: "./servers/riptide-mux", Bin: "riptide-mux", Args: []string{"-engine", "goroutine"}, Probe: true, Default: true, HTTP2: true},
		{Name: "riptide-h2inline", Desc: "riptide native API with HTTP2Config.InlineHandlers (-h2inline): HTTP/2 handlers on the connection goroutine", Kind: KindGo, Pkg: "./servers/riptide", Bin: "riptide", Args: []string{"-h2inline"}, Probe: true, Default: true, HTTP2: true, H2Only: true},
		{Name: "riptide-chi", Desc: "riptide compat door (riptide.FromHTTP) with a go-chi/chi router", Kind: KindGo, Pkg: "./servers/riptide-chi", Probe: true, Default: true, HTTP2: true},
		{Name: "fasthttp", Desc: "valyala/fasthttp, default settings", Kind: KindGo, Pkg: "./servers/fasthttp", Probe: true, Default: true},
		{Name: "nethttp", Desc: "net/http with http.ServeMux", Kind: KindGo, Pkg: "./servers/nethttp", Probe: true, Default: true, HTTP2: true},
		{Name: "chi", Desc: "net/http with a go-chi/chi router", Kind: KindGo, Pkg: "./servers/chi", Probe: true, Default: true, HTTP2: true},
		{Name: "ceiling", Desc: "C epoll responder, canned response, no parsing (machine limit)", Kind: KindCeiling, Default: true},
		{Name: "nginx", Desc: "nginx, `return 200` and a static 64 KiB file (when installed)", Kind: KindNginx, Optional: true, Default: true},
		{Name: "h2o", Desc: "h2o (C), GET / as a 13-byte static file, num-threads = the servers' CPUs (HTTP/2 ceiling, when installed)", Kind: KindH2O, Optional: true, Default: true, HTTP2: true, H2Only: true},
		{Name: "riptide-h3", Desc: "riptide native API over HTTP/3 (http3.Serve, func(*riptide.Ctx)); HTTP/3 workloads only", Kind: KindGo, Pkg: "./servers/riptide-h3", Default: true, HTTP3: true},
		{Name: "riptide-h3-compat", Desc: "riptide compat door (riptide.FromHTTP, http.ServeMux) over HTTP/3 (http3.Serve); HTTP/3 workloads only", Kind: KindGo, Pkg: "./servers/riptide-h3", Bin: "riptide-h3", Args: []string{"-door", "compat"}, Default: true, HTTP3: true},
		{Name: "quicgo-h3", Desc: "quic-go's http3.Server (defaults) with http.ServeMux, the HTTP/3 baseline; HTTP/3 workloads only", Kind: KindGo, Pkg: "./servers/quicgo-h3", Default: true, HTTP3: true},
		{Name: "quicgo-bare", Desc: "quic-go QUIC streams answered with a prebuilt HEADERS+DATA byte string, no HTTP/3 layer (the floor of any HTTP/3 server on quic-go); HTTP/3 workloads only", Kind: KindGo, Pkg: "./servers/quicgo-bare", HTTP3: true},
		{Name: "riptide-ws", Desc: "riptide native API: websocket.Upgrade on a *riptide.Ctx, each Conn on its own goroutine (the blocking Conn); WebSocket workloads only", Kind: KindGo, Pkg: "./servers/riptide-ws", Default: true, WS: true},
		{Name: "riptide-ws-compat", Desc: "riptide compat door: websocket.Accept in an http.Handler under riptide.FromHTTP, each Conn on its own goroutine; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/riptide-ws-compat", Default: true, WS: true},
		{Name: "riptide-ws-event", Desc: "riptide native API, event-driven: websocket.Serve with OnOpen/OnMessage/OnClose callbacks, an idle connection parked on the event loop (no goroutine, no buffer); WebSocket workloads only", Kind: KindGo, Pkg: "./servers/riptide-ws-event", Default: true, WS: true},
		{Name: "nbio-ws", Desc: "lesismal/nbio v1.6.8: nbhttp.Engine (event-driven, non-blocking I/O) with nbhttp/websocket OnMessage callbacks; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/nbio-ws", Default: true, WS: true},
		{Name: "gorilla-ws", Desc: "gorilla/websocket v1.5.3 on net/http, default buffers, each Conn on its own goroutine; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/gorilla-ws", Default: true, WS: true},
		{Name: "coder-ws", Desc: "coder/websocket v1.8.15 on net/http, compression off, each Conn on its own goroutine; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/coder-ws", Default: true, WS: true},
		{Name: "gobwas-ws", Desc: "gobwas/ws v1.5.0 low-level API (ws.UpgradeHTTP, ReadHeader, Cipher, WriteHeader) on net/http, net/http's hijacked 4 KiB buffers, a goroutine per connection; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/gobwas-ws", Default: true, WS: true},
		{Name: "fasthttp-ws", Desc: "fasthttp/websocket v1.5.12 on valyala/fasthttp v1.74.0, the Conn served in fasthttp's hijack goroutine; WebSocket workloads only", Kind: KindGo, Pkg: "./servers/fasthttp-ws", Default: true, WS: true},
		{Name: WSFloor, Desc: "a reference floor, not a library: minimal user space, the syscalls the workload forces (one goroutine, one edge-triggered epoll, one read per readable edge, one write per frame and receiver, frames echoed in place); the WebSocket workloads' ×ceiling, never a peer in ×best peer; WebSocket workloads only (Linux)", Kind: KindGo, Pkg: "./servers/ws-floor", Default: true, WS: true},
		{Name: "nghttpd", Desc: "nghttpd (C, nghttp2), GET / as a 13-byte static file, -n = the servers' CPUs (HTTP/2 reference, when installed)", Kind: KindNghttpd, Optional: true, Default: true, HTTP2: true, H2Only: true},
	}
}

// H3Baseline is the server the HTTP/3 workloads' ratios are computed
// against: quic-go's own HTTP/3 server.
const H3Baseline = "quicgo-h3"

// BaselineOf is the server a workload's ×baseline ratios are computed
// against: net/http, or quic-go's http3.Server for the HTTP/3 workloads
// (net/http has no HTTP/3 server).
func BaselineOf(w Workload) string {
	if w.HTTP3 {
		return H3Baseline
	}
	return Baseline
}

// DefaultServersFor narrows the default server list to the servers that
// can run some of the selected workloads as far as WebSocket goes: the
// WebSocket servers when a WebSocket workload is selected, the others when
// another workload is (so that a default HTTP run does not list the
// WebSocket servers as skipped, nor a WebSocket run the HTTP servers).
func DefaultServersFor(servers []Server, workloads []Workload) []Server {
	var ws, other bool
	for _, w := range workloads {
		if w.WS != WSNone {
			ws = true
		} else {
			other = true
		}
	}
	var out []Server
	for _, s := range servers {
		if (s.WS && ws) || (!s.WS && other) {
			out = append(out, s)
		}
	}
	return out
}

// Lookup returns the registered server with the given name.
func Lookup(name string) (Server, bool) {
	for _, s := range Registry() {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Available reports whether the server can be built on this machine and
// checkout, and if not, why.
func (s Server) Available(root string) error {
	switch s.Kind {
	case KindGo:
		if _, err := os.Stat(filepath.Join(root, s.Pkg, "main.go")); err != nil {
			return fmt.Errorf("%s not present in this checkout", s.Pkg)
		}
	case KindCeiling:
		if _, err := exec.LookPath("cc"); err != nil {
			return fmt.Errorf("cc not installed")
		}
	case KindNginx:
		if _, err := nginxPath(); err != nil {
			return err
		}
	case KindH2O:
		if _, err := h2oPath(); err != nil {
			return err
		}
	case KindNghttpd:
		if _, err := nghttpdPath(); err != nil {
			return err
		}
	}
	return nil
}

// AvailablePrebuilt is Available for a packed kit: the Go servers and the
// ceiling must be in binDir already (nothing is built); the others are
// looked up as Available does.
func (s Server) AvailablePrebuilt(binDir string) error {
	switch s.Kind {
	case KindGo, KindCeiling:
		if fi, err := os.Stat(s.BinPath(binDir)); err != nil || fi.IsDir() {
			return fmt.Errorf("%s is not in the prebuilt directory %s", filepath.Base(s.BinPath(binDir)), binDir)
		}
		return nil
	}
	return s.Available("")
}

// Supports reports whether the server can run workload w.
func (s Server) Supports(w Workload) bool { return s.Unsupported(w) == "" }

// Unsupported says why the server cannot run workload w, or "" if it can.
func (s Server) Unsupported(w Workload) string {
	if s.WS && w.WS == WSNone {
		return "WebSocket workloads only"
	}
	if !s.WS && w.WS != WSNone {
		return "not a WebSocket server"
	}
	if w.HTTP3 != s.HTTP3 {
		if s.HTTP3 {
			return "HTTP/3 workloads only"
		}
		return "no HTTP/3"
	}
	if w.HTTP2 != H2None && !s.HTTP2 {
		switch s.Kind {
		case KindCeiling:
			return "the ceiling speaks only HTTP/1.1 (no HTTP/2 framing, no TLS)"
		case KindNginx:
			return "the generated nginx configuration serves HTTP/1.1 only (no http2)"
		}
		return "no HTTP/2 support (fasthttp has none)"
	}
	if w.TLS && s.Kind == KindCeiling {
		return "the ceiling has no TLS"
	}
	if w.TLS && w.Idle > 0 && s.Kind != KindGo {
		return "idle TLS memory is measured for the Go servers only"
	}
	if s.TLSOnly && !w.TLS && w.HTTP2 != H2TLS {
		return "TLS workloads only (without TLS it is the same server as riptide)"
	}
	if s.H2Only && w.HTTP2 == H2None {
		return "HTTP/2 workloads only"
	}
	if w.Profile == benchserver.ProfileStatic && s.Kind == KindNginx {
		return "" // the generated configuration serves the static files
	}
	if w.Profile != "" && s.Kind != KindGo {
		return "serves canned responses, no routed app"
	}
	if s.Kind == KindNginx && w.NeedsEcho {
		return "stock nginx has no request-body echo"
	}
	return ""
}

// BinPath is where Build puts the server's executable.
func (s Server) BinPath(binDir string) string {
	switch s.Kind {
	case KindNginx:
		p, _ := nginxPath()
		return p
	case KindH2O:
		p, _ := h2oPath()
		return p
	case KindNghttpd:
		p, _ := nghttpdPath()
		return p
	}
	if s.Bin != "" {
		return filepath.Join(binDir, s.Bin)
	}
	return filepath.Join(binDir, s.Name)
}

func nginxPath() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", fmt.Errorf("nginx not installed (apt-get install -y nginx-light)")
}

// Build compiles servers into binDir: all Go servers with one `go build`
// invocation, the ceiling with `cc -O2`. root is the bench module root.
func Build(ctx context.Context, root, binDir string, servers []Server) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	var pkgs []string
	for _, s := range servers {
		switch s.Kind {
		case KindGo:
			if !slices.Contains(pkgs, s.Pkg) { // variants share a binary
				pkgs = append(pkgs, s.Pkg)
			}
		case KindCeiling:
			cmd := exec.CommandContext(ctx, "cc", "-O2", "-Wall", "-o", s.BinPath(binDir),
				filepath.Join(root, "ceiling", "ceiling.c"), "-lpthread")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("building ceiling: %v\n%s", err, out)
			}
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	args := append([]string{"build", "-trimpath", "-o", binDir + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// go build names each binary after its package directory; the registry
	// names match those directories.
	return nil
}

// FindRoot returns the bench module root: dir or the closest parent holding
// a go.mod whose module line is this module, or dir/bench.
func FindRoot(dir string) (string, error) {
	const mod = "module github.com/riptide-http/riptide/bench"
	start := dir
	for {
		for _, cand := range []string{dir, filepath.Join(dir, "bench")} {
			b, err := os.ReadFile(filepath.Join(cand, "go.mod"))
			if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), mod) {
				return cand, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no bench module (%s) at or above %s", mod, start)
		}
		dir = parent
	}
}
