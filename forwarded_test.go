package riptide

import (
	"io"
	"net/http"
	"net/netip"
	"testing"
)

// TestForwarded: the client address from Forwarded / X-Forwarded-For,
// read right to left past trusted proxies, only for trusted peers.
func TestForwarded(t *testing.T) {
	t.Parallel()
	trusted := &ForwardedConfig{TrustedNetworks: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}}
	trustedRFC := &ForwardedConfig{TrustedNetworks: trusted.TrustedNetworks, Header: HeaderForwarded}
	tests := []struct {
		name    string
		cfg     *ForwardedConfig
		headers string
		want    string // "" means the peer's address
	}{
		{"off by default", nil, "X-Forwarded-For: 203.0.113.7\r\n", ""},
		{"untrusted peer", &ForwardedConfig{TrustedNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
			"X-Forwarded-For: 203.0.113.7\r\n", ""},
		{"X-Forwarded-For one hop", trusted, "X-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7:0"},
		{"X-Forwarded-For: the rightmost untrusted entry", trusted,
			"X-Forwarded-For: 198.51.100.9, 203.0.113.7, 10.1.1.1\r\n", "203.0.113.7:0"},
		{"X-Forwarded-For over two lines", trusted,
			"X-Forwarded-For: 198.51.100.9\r\nX-Forwarded-For: 10.2.2.2, 10.1.1.1\r\n", "198.51.100.9:0"},
		{"all trusted: the leftmost", trusted, "X-Forwarded-For: 10.3.3.3, 10.1.1.1\r\n", "10.3.3.3:0"},
		{"X-Forwarded-For with a port", trusted, "X-Forwarded-For: 203.0.113.7:4242\r\n", "203.0.113.7:4242"},
		{"X-Forwarded-For garbage", trusted, "X-Forwarded-For: not-an-ip\r\n", ""},
		{"Forwarded configured, quoted IPv6 with port", trustedRFC,
			"X-Forwarded-For: 198.51.100.1\r\nForwarded: for=\"[2001:db8::7]:4711\";proto=https, for=10.1.1.1\r\n", "[2001:db8::7]:4711"},
		{"Forwarded unknown", trustedRFC, "Forwarded: for=unknown\r\n", ""},
		// issue 23 item 5: nginx appends to X-Forwarded-For and passes the
		// client's own Forwarded through; the client must not choose.
		{"nginx: a client's Forwarded is ignored by default", trusted,
			"Forwarded: for=6.6.6.6\r\nX-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7:0"},
		{"nginx: a client's Forwarded alone is ignored by default", trusted,
			"Forwarded: for=6.6.6.6\r\n", ""},
		{"Forwarded configured: a client's X-Forwarded-For is ignored", trustedRFC,
			"X-Forwarded-For: 6.6.6.6\r\nForwarded: for=203.0.113.7\r\n", "203.0.113.7:0"},
		{"Forwarded configured: a client's X-Forwarded-For alone is ignored", trustedRFC,
			"X-Forwarded-For: 6.6.6.6\r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, compat := range []bool{false, true} {
				var h HandlerFunc = func(x *Ctx) { x.WriteString(x.RemoteAddr().String()) }
				if compat {
					h = FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.RemoteAddr)) })).ServeCtx
				}
				_, addr := startServer(t, &Server{Forwarded: tt.cfg}, h)
				rc := dial(t, addr)
				rc.send("GET / HTTP/1.1\r\nHost: x\r\n" + tt.headers + "\r\n")
				_, body := rc.resp("GET")
				want := tt.want
				if want == "" {
					want = rc.nc.LocalAddr().String()
				}
				if body != want {
					t.Errorf("compat=%v: got %q, want %q", compat, body, want)
				}
			}
		})
	}
}

// TestForwardedHTTP2: both doors over h2c take the client from a trusted
// peer's X-Forwarded-For, and a Forwarded header the client added (which
// a proxy maintaining X-Forwarded-For passes through) changes nothing.
func TestForwardedHTTP2(t *testing.T) {
	t.Parallel()
	cfg := &ForwardedConfig{TrustedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	for _, compat := range []bool{false, true} {
		var h HandlerFunc = func(x *Ctx) { x.WriteString(x.RemoteAddr().String()) }
		if compat {
			h = FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.RemoteAddr)) })).ServeCtx
		}
		_, addr := startServer(t, &Server{Forwarded: cfg, HTTP2: &HTTP2Config{H2C: true}}, h)
		tr := &http.Transport{Protocols: &p}
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.1, 203.0.113.7")
		req.Header.Set("Forwarded", "for=6.6.6.6")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.ProtoMajor != 2 || string(body) != "203.0.113.7:0" {
			t.Errorf("compat=%v: %s %q", compat, resp.Proto, body)
		}
	}
}
