package riptide

import (
	"io"
	"net/http"
	"testing"
)

// RFC 9112 §3.2.2: for an absolute-form target the server uses the
// target's authority and ignores Host. Native Ctx.Host agrees with the
// compat door and net/http on every form.
func TestHostFromAbsoluteForm(t *testing.T) {
	t.Parallel()
	native := func(c *Ctx) { c.Write(c.Host()) }
	compat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Host) })
	_, nativeAddr := startServer(t, nil, native)
	compatAddr := serveCompat(t, compat)
	stdAddr := serveParityNetHTTP(t, compat)
	for _, tc := range []struct{ target, host, want string }{
		{"http://good.example/", "evil.example", "good.example"},
		{"http://good.example:8080/a?b=c", "evil.example", "good.example:8080"},
		{"http://good.example?q", "evil.example", "good.example"},
		{"HTTP://good.example", "good.example", "good.example"},
		{"/path", "plain.example", "plain.example"},
	} {
		req := "GET " + tc.target + " HTTP/1.1\r\nHost: " + tc.host + "\r\n\r\n"
		for _, door := range []struct{ name, addr string }{
			{"native", nativeAddr}, {"compat", compatAddr}, {"net/http", stdAddr},
		} {
			rc := dial(t, door.addr)
			rc.send(req)
			if res, body := rc.resp("GET"); res.StatusCode != 200 || body != tc.want {
				t.Errorf("%s: GET %s with Host %s: got %d %q, want %q",
					door.name, tc.target, tc.host, res.StatusCode, body, tc.want)
			}
		}
	}
}
