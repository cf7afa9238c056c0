// Package benchserver holds what every benchmark server binary shares: the
// command-line contract (-addr, -profile), the response payloads, and the
// listen / signal / shutdown lifecycle.
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
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
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
}

// ParseFlags defines -addr and -profile on the default flag set, parses the
// command line and validates the profile. It exits with status 2 on error.
func ParseFlags() Options {
	var o Options
	var profile string
	flag.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free port)")
	flag.StringVar(&profile, "profile", string(ProfileBench), "route profile: bench or probe")
	flag.Parse()
	o.Profile = Profile(profile)
	if o.Profile != ProfileBench && o.Profile != ProfileProbe {
		fmt.Fprintf(os.Stderr, "unknown -profile %q (want bench or probe)\n", profile)
		os.Exit(2)
	}
	return o
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
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- serve(ln) }()
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
