package harness

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/h3"
)

// h3Frames builds a response stream: HEADERS with :status and each frame
// of parts ("D:" DATA with the rest as payload, "T:" trailers, "U:" an
// unknown frame type).
func h3Frames(status int, parts ...string) []byte {
	sec := h3.AppendStatus(h3.AppendFieldSectionPrefix(nil), status)
	b := append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
	for _, p := range parts {
		kind, payload, _ := strings.Cut(p, ":")
		switch kind {
		case "D":
			b = append(h3.AppendFrameHeader(b, h3.FrameData, uint64(len(payload))), payload...)
		case "T":
			t := h3.AppendField(h3.AppendFieldSectionPrefix(nil), "x-trailer", payload, false)
			b = append(h3.AppendFrameHeader(b, h3.FrameHeaders, uint64(len(t))), t...)
		case "U":
			b = append(h3.AppendFrameHeader(b, 0x21, uint64(len(payload))), payload...) // reserved grease type
		}
	}
	return b
}

// TestH3Response: the load generator's response check, frame by frame.
func TestH3Response(t *testing.T) {
	hello := mustWorkload("h3")
	bulk := Workload{ExpectLen: 10}
	for _, c := range []struct {
		name   string
		w      Workload
		stream []byte
		status int
		n      int64
		bad    bool // errBadResponse
		err    bool // another error
	}{
		{"hello in one DATA frame", hello, h3Frames(200, "D:Hello, World!"), 200, 13, false, false},
		{"hello in two frames with an unknown frame between", hello, h3Frames(200, "D:Hello, ", "U:grease", "D:World!"), 200, 13, false, false},
		{"hello with trailers", hello, h3Frames(200, "D:Hello, World!", "T:v"), 200, 13, false, false},
		{"wrong body", hello, h3Frames(200, "D:Hello, world!"), 0, 0, true, false},
		{"short body", hello, h3Frames(200, "D:Hello"), 200, 5, true, false},
		{"long body", hello, h3Frames(200, "D:Hello, World!!"), 0, 13, true, false},
		{"status 500 is returned, its body not checked", hello, h3Frames(500, "D:oops"), 500, 4, false, false},
		{"bulk length", bulk, h3Frames(200, "D:01234", "D:56789"), 200, 10, false, false},
		{"bulk too short", bulk, h3Frames(200, "D:01234"), 200, 5, true, false},
		{"DATA before HEADERS", hello, append(h3.AppendFrameHeader(nil, h3.FrameData, 1), 'x'), 0, 0, true, false},
		{"empty stream", hello, nil, 0, 0, false, true},
		{"stream ends inside a frame", hello, h3Frames(200, "D:Hello, World!")[:15], 0, 0, false, true},
		{"stream ends inside a frame header", hello, append(h3Frames(200), 0x00), 0, 0, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, n, err := newH3Reader().response(bytes.NewReader(c.stream), c.w)
			if bad := errors.Is(err, errBadResponse); bad != c.bad || (err != nil && !bad) != c.err {
				t.Fatalf("err = %v; want bad response %v, other error %v", err, c.bad, c.err)
			}
			if err == nil && (status != c.status || n != c.n) {
				t.Errorf("status %d, %d body bytes; want %d, %d", status, n, c.status, c.n)
			}
		})
	}
}

// TestH3Support: the HTTP/3 servers run the HTTP/3 workloads and nothing
// else, the others no HTTP/3 workload; HTTP/3 ratios are against quic-go.
func TestH3Support(t *testing.T) {
	n := 0
	for _, s := range Registry() {
		for _, w := range Workloads() {
			if s.Supports(w) && w.HTTP3 != s.HTTP3 {
				t.Errorf("%s supports %s", s.Name, w.Name)
			}
			if s.HTTP3 && w.HTTP3 && !s.Supports(w) {
				t.Errorf("%s does not support %s: %s", s.Name, w.Name, s.Unsupported(w))
			}
		}
		if s.HTTP3 {
			n++
		}
	}
	if n == 0 {
		t.Error("no HTTP/3 server registered")
	}
	if _, ok := Lookup(H3Baseline); !ok {
		t.Errorf("the HTTP/3 baseline %s is not registered", H3Baseline)
	}
	if BaselineOf(mustWorkload("h3bulk")) != H3Baseline || BaselineOf(mustWorkload("plaintext")) != Baseline {
		t.Error("BaselineOf")
	}
	if ws, _ := SelectWorkloads(""); len(ws) > 0 {
		for _, w := range ws {
			if w.HTTP3 {
				t.Errorf("%s is in the default set", w.Name)
			}
		}
	}
}

// TestH3LoadFlagsWrongServer: a run against an HTTP/3 server that answers
// the wrong body is flagged, with the server's allocations unreported (it
// has no counter route).
func TestH3LoadFlagsWrongServer(t *testing.T) {
	addr := wrongBodyH3Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, st, err := LoadH3(ctx, addr, mustWorkload("h3"), 1, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	flag := FlagOf(st, err, nil)
	if st.Failed == 0 || st.Requests != 0 || !strings.Contains(flag, "failed requests") {
		t.Errorf("requests %d, failed %d, flag %q\n%s", st.Requests, st.Failed, flag, out)
	}
	if st.AllocsPerReq != 0 || !bytes.Contains(out, []byte("server allocations: not reported")) {
		t.Errorf("allocations %v\n%s", st.AllocsPerReq, out)
	}
}

// wrongBodyH3Server starts quic-go's http3.Server answering every request
// with a wrong 13-byte body ("Hello, Wordl!") on 127.0.0.1 for the test's
// duration, and returns its address.
func wrongBodyH3Server(t *testing.T) string {
	t.Helper()
	tlsConf, err := benchserver.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(tlsConf), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, Wordl!"))
	})}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close() })
	return pc.LocalAddr().String()
}
