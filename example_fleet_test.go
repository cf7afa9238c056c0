package riptide_test

import (
	"fmt"
	"io"
	"net"
	"net/netip"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/proxyproto"
)

// Behind a layer 4 balancer: the PROXY protocol from the balancer's
// network, the client's address in RemoteAddr, readiness and metrics
// routes, and Stats.
func ExampleProxyConfig() {
	srv := &riptide.Server{
		ProxyProtocol: &riptide.ProxyConfig{TrustedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	}
	ready, metrics := srv.ReadyHandler(), srv.MetricsHandler()
	srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/ready":
			ready.ServeCtx(x)
		case "/metrics":
			metrics.ServeCtx(x)
		default:
			fmt.Fprintf(x, "hello %s", x.RemoteAddr())
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	// What the balancer sends: a PROXY header, then the client's bytes.
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	hdr := proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Proxy, Family: proxyproto.INET,
		Source: netip.MustParseAddrPort("203.0.113.7:4242"), Destination: netip.MustParseAddrPort("198.51.100.1:80")}, false)
	nc.Write(append(hdr, "GET / HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n"...))
	resp, _ := io.ReadAll(nc)
	fmt.Println(string(resp[len(resp)-len("hello 203.0.113.7:4242"):]))

	var st riptide.Stats
	srv.Stats(&st)
	fmt.Println("requests:", st.Requests, "2xx:", st.Responses[1])
	// Output:
	// hello 203.0.113.7:4242
	// requests: 1 2xx: 1
}
