// Package benchserver holds what every benchmark server binary shares: the
// command-line contract (-addr, -profile, -h2c, -tls), the response
// payloads, and the listen / signal / shutdown lifecycle.
//
// Every server binary under bench/servers prints exactly one line
//
//	listening on 127.0.0.1:PORT
//
// on standard output once it accepts connections, so a caller may pass
// -addr 127.0.0.1:0 and learn the port from that line. It exits on SIGINT or
// SIGTERM.
package benchserver

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// Profile selects the set of routes a server exposes.
type Profile string

const (
	// ProfileBench serves the load-test routes: GET / (plaintext), GET /json,
	// POST /echo (body echo) and GET /64k.
	ProfileBench Profile = "bench"
	// ProfileProbe serves the conformance-probe routes: GET, HEAD and OPTIONS /,
	// POST / (body echo), POST /echo (request headers as "Name: Value" lines)
	// and GET /cookie (parsed cookies as "name=value" lines).
	ProfileProbe Profile = "probe"
)

// Hello is the plaintext body of GET /.
const Hello = "Hello, World!"

// Body64KSize is the length of the GET /64k body.
const Body64KSize = 64 << 10

// Body64K is the GET /64k body: 64 KiB of printable ASCII. Handlers must not
// modify it.
var Body64K = bytes.Repeat([]byte("0123456789abcdef"), Body64KSize/16)

// Message is the document GET /json encodes on every request.
type Message struct {
	Message string `json:"message"`
}

// HelloMessage is the value encoded by GET /json.
var HelloMessage = Message{Message: Hello}

// Options are the parsed command-line flags shared by all servers.
type Options struct {
	Addr    string
	Profile Profile
	// H2C (-h2c) serves cleartext HTTP/2 with prior knowledge on the same
	// port as HTTP/1.1.
	H2C bool
	// TLS (-tls) serves HTTPS with ALPN offering h2 and http/1.1; TLSConfig
	// then holds a self-signed certificate generated at start.
	TLS       bool
	TLSConfig *tls.Config
	// Engine (-engine) is riptide's connection engine: auto, goroutine,
	// eventloop or onloop (riptide servers only; the others ignore it).
	Engine string
	// TLSEngine (-tlsengine) is riptide's engine for TLS connections
	// (Server.TLSEngine): auto, eventloop or goroutine (riptide servers only).
	TLSEngine string
	// H2Inline (-h2inline) runs native handlers of HTTP/2 streams on the
	// connection's goroutine (riptide's HTTP2Config.InlineHandlers;
	// riptide native servers only, the others ignore it).
	H2Inline bool
	// CPUProfile (-cpuprofile) is a file to write a CPU profile of the
	// server's whole life to (written when SIGINT or SIGTERM stops it).
	CPUProfile string
}

// ParseFlags defines -addr, -profile, -h2c and -tls on the default flag set,
// parses the command line and validates it; with -tls it generates the
// self-signed certificate. It exits with status 2 on a usage error.
func ParseFlags() Options {
	var o Options
	var profile string
	flag.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free port)")
	flag.StringVar(&profile, "profile", string(ProfileBench), "route profile: bench, probe, routed or static")
	flag.BoolVar(&o.H2C, "h2c", false, "also serve cleartext HTTP/2 (prior knowledge) on the HTTP/1.1 port")
	flag.BoolVar(&o.TLS, "tls", false, "serve HTTPS (ALPN h2 and http/1.1) with a self-signed certificate generated at start")
	flag.StringVar(&o.Engine, "engine", "auto", "riptide servers: connection engine, auto, goroutine, eventloop or onloop (event loop, handlers on the loop)")
	flag.StringVar(&o.TLSEngine, "tlsengine", "auto", "riptide servers: engine of TLS connections (Server.TLSEngine), auto (follows -engine), eventloop or goroutine")
	flag.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (on SIGINT or SIGTERM)")
	flag.BoolVar(&o.H2Inline, "h2inline", false, "riptide native servers: run HTTP/2 handlers inline on the connection goroutine (HTTP2Config.InlineHandlers)")
	flag.Parse()
	o.Profile = Profile(profile)
	if o.Profile != ProfileBench && o.Profile != ProfileProbe && o.Profile != ProfileRouted && o.Profile != ProfileStatic {
		fmt.Fprintf(os.Stderr, "unknown -profile %q (want bench, probe, routed or static)\n", profile)
		os.Exit(2)
	}
	if o.H2C && o.TLS {
		fmt.Fprintln(os.Stderr, "-h2c and -tls are exclusive (TLS negotiates h2 with ALPN)")
		os.Exit(2)
	}
	if o.TLS {
		cfg, err := SelfSignedTLS()
		if err != nil {
			fmt.Fprintln(os.Stderr, "tls:", err)
			os.Exit(1)
		}
		o.TLSConfig = cfg
	}
	return o
}

// RequireNoH2C exits with status 2 if -h2c was given: for servers without
// HTTP/2 (fasthttp; with -tls it serves HTTP/1.1 over TLS).
func (o Options) RequireNoH2C(name string) {
	if o.H2C {
		fmt.Fprintf(os.Stderr, "%s: -h2c is not supported by this server\n", name)
		os.Exit(2)
	}
}

// Serve returns the serve function Main should call: serve for plain TCP,
// or serveTLS(ln, "", "") with -tls (the certificate is in the server's
// TLSConfig, set from o.TLSConfig).
func (o Options) Serve(serve func(net.Listener) error, serveTLS func(ln net.Listener, certFile, keyFile string) error) func(net.Listener) error {
	if o.TLS {
		return func(ln net.Listener) error { return serveTLS(ln, "", "") }
	}
	return serve
}

// ConfigureNetHTTP applies -h2c and -tls to a net/http server: h2c through
// http.Server.Protocols (HTTP/1.1 plus unencrypted HTTP/2), TLS through
// TLSConfig (ServeTLS then negotiates h2 or http/1.1 with ALPN). Without
// either flag it leaves srv untouched, so HTTP/1.1 behaviour is unchanged.
func ConfigureNetHTTP(srv *http.Server, o Options) {
	if o.H2C {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	if o.TLS {
		srv.TLSConfig = o.TLSConfig
	}
}

// Listen opens a TCP listener on addr and announces it on standard output
// with the "listening on ADDR" line.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	return ln, nil
}

// Main runs a server: it listens on o.Addr, calls serve with the listener in
// a goroutine, and calls stop when SIGINT or SIGTERM arrives. It exits the
// process with status 1 if listening or serving fails.
func Main(o Options, serve func(net.Listener) error, stop func()) {
	ln, err := Listen(o.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	run(o, func() error { return serve(ln) }, stop)
}

// Wait is Main for a server that serves on goroutines of its own once
// started (an event-driven engine such as nbio's): it waits for SIGINT or
// SIGTERM and calls stop.
func Wait(o Options, stop func()) {
	run(o, func() error { select {} }, stop)
}

// run calls serve in a goroutine (with a CPU profile when asked) and stop
// when SIGINT or SIGTERM arrives; it exits the process with status 1 if
// serving fails.
func run(o Options, serve func() error, stop func()) {
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpuprofile:", err)
			os.Exit(1)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case <-sig:
		stop()
	case err := <-errc:
		if err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
	}
}
