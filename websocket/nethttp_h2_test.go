package websocket

import (
	"bufio"
	"crypto/tls"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// net/http's own HTTP/2 server serves extended CONNECT only with
// GODEBUG=http2xconnect=1, read once at start-up: the server runs in a
// child process of the test binary (TestNetHTTPH2Server) with it set.

// TestNetHTTPH2Server is the child: an httptest TLS server with HTTP/2
// whose handler Accepts and serves the echo; it prints its URL and runs
// until its standard input closes. Not a test on its own.
func TestNetHTTPH2Server(t *testing.T) {
	if os.Getenv("RIPTIDE_WS_NETHTTP_CHILD") != "1" {
		t.Skip("the child process of TestAcceptNetHTTP2")
	}
	ts := httptest.NewUnstartedServer(compatEcho(echoOpts))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	os.Stdout.WriteString(ts.URL + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// TestAcceptNetHTTP2: Accept on net/http's HTTP/2 server (GODEBUG
// http2xconnect=1, Go 1.24+), whose ResponseWriter cannot be hijacked,
// serves the extended CONNECT on the ResponseWriter and request body
// while the handler runs: the whole exercise passes over it.
func TestAcceptNetHTTP2(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestNetHTTPH2Server$")
	stdout, stop := startChild(t, cmd, "RIPTIDE_WS_NETHTTP_CHILD=1", "GODEBUG=http2xconnect=1")
	defer stop()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "https://") {
		t.Fatalf("child printed %q, %v", line, err)
	}
	url := "wss" + strings.TrimPrefix(strings.TrimSpace(line), "https") + "/"
	tc := &tls.Config{InsecureSkipVerify: true} // httptest's certificate, for this loopback test
	exerciseDial(t, url, true, tc, true)
	exerciseDial(t, url, false, tc, true)
}
