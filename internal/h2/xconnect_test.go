package h2

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Extended CONNECT (RFC 8441): SETTINGS_ENABLE_CONNECT_PROTOCOL and the
// checks of a request with :protocol, on a raw connection.

// xconnectHandler records the streams it is given and answers 200.
type xconnectHandler struct {
	got chan [4]string // method, protocol, path, the target FillRequest built
}

func (h *xconnectHandler) ServeStream(st *Stream) {
	var req h1.Request
	_, _, code := st.FillRequest(&req, nil, 100)
	h.got <- [4]string{st.Method(), st.Protocol(), st.Path(), string(req.Target) + " " + string(rune('0'+code/100))}
	_ = st.WriteHead(&Head{Status: 200, ContentLength: -1}, nil, true)
}

// headersFrame encodes fields as one HEADERS frame (END_HEADERS, and
// END_STREAM when end) on stream id.
func headersFrame(id uint32, end bool, fields ...string) []byte {
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	for i := 0; i < len(fields); i += 2 {
		_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	flags := byte(0x4)
	if end {
		flags |= 0x1
	}
	return rawFrame(1, flags, id, blk.Bytes()...)
}

// xconnectRun serves one connection with enable set, sends frames after
// the preface and an empty SETTINGS, and returns the server's first
// SETTINGS (id -> value), its RST_STREAMs (id<<32 | code), and the
// streams the handler saw.
func xconnectRun(t *testing.T, enable bool, frames []byte) (map[uint16]uint32, []uint64, [][4]string) {
	t.Helper()
	srv, cli := net.Pipe()
	h := &xconnectHandler{got: make(chan [4]string, 8)}
	hc := NewConn(&Config{Handler: h, EnableConnectProtocol: enable}, srv, nil, nil, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hc.Serve(false, nil)
	}()
	go func() {
		wire := rawSeq([]byte(Preface), rawFrame(4, 0, 0), frames, rawFrameN(7, 0, 0, 8))
		_, _ = cli.Write(wire)
	}()
	_ = cli.SetReadDeadline(time.Now().Add(10 * time.Second))
	var settings map[uint16]uint32
	var resets []uint64
	fr := http2.NewFramer(nil, cli)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && settings == nil {
				settings = map[uint16]uint32{}
				_ = f.ForeachSetting(func(s http2.Setting) error {
					settings[uint16(s.ID)] = s.Val
					return nil
				})
			}
		case *http2.RSTStreamFrame:
			resets = append(resets, uint64(f.StreamID)<<32|uint64(f.ErrCode))
		}
	}
	cli.Close()
	<-served
	close(h.got)
	var seen [][4]string
	for s := range h.got {
		seen = append(seen, s)
	}
	return settings, resets, seen
}

// TestExtendedConnectSetting: SETTINGS_ENABLE_CONNECT_PROTOCOL=1 is in
// the server's first SETTINGS frame only when EnableConnectProtocol is
// set (RFC 8441 §3; golang/go#71128: a browser that sees it uses it for
// every WebSocket to the origin).
func TestExtendedConnectSetting(t *testing.T) {
	on, _, _ := xconnectRun(t, true, nil)
	if v, ok := on[uint16(SettingEnableConnectProtocol)]; !ok || v != 1 {
		t.Errorf("enabled: first SETTINGS %v, want ENABLE_CONNECT_PROTOCOL (8) = 1", on)
	}
	off, _, _ := xconnectRun(t, false, nil)
	if off == nil {
		t.Fatal("disabled: no SETTINGS")
	}
	if _, ok := off[uint16(SettingEnableConnectProtocol)]; ok {
		t.Errorf("disabled: first SETTINGS %v carries ENABLE_CONNECT_PROTOCOL", off)
	}
}

// TestExtendedConnectRequests: an extended CONNECT reaches the handler
// with its :protocol and :path as the target when enabled; a request with
// :protocol while disabled, or with a pseudo-header missing or wrong, is
// malformed: RST_STREAM PROTOCOL_ERROR, no handler (RFC 8441 §4, RFC 9113
// §8.1.1, §8.5).
func TestExtendedConnectRequests(t *testing.T) {
	const protocolError = 1
	ws := []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/chat?room=1", ":authority", "a.example", "sec-websocket-version", "13"}
	without := func(name string) []string {
		var out []string
		for i := 0; i < len(ws); i += 2 {
			if ws[i] != name {
				out = append(out, ws[i], ws[i+1])
			}
		}
		return out
	}
	with := func(name, value string) []string {
		out := append([]string(nil), ws...)
		for i := 0; i < len(out); i += 2 {
			if out[i] == name {
				out[i+1] = value
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		enable bool
		fields []string
		want   string // the handler's view, "" when refused
	}{
		{"valid", true, ws, "CONNECT websocket /chat?room=1 /chat?room=1 0"},
		{"setting off: :protocol is malformed", false, ws, ""},
		{"no :path", true, without(":path"), ""},
		{"no :scheme", true, without(":scheme"), ""},
		{"no :authority", true, without(":authority"), ""},
		{":protocol on GET", true, with(":method", "GET"), ""},
		{"empty :protocol", true, with(":protocol", ""), ""},
		{"bad :scheme", true, with(":scheme", "ftp"), ""},
		{"absolute :path", true, with(":path", "https://b.example/"), ""},
		{"repeated :protocol", true, append(append([]string{}, ws[:4]...), append([]string{":protocol", "x"}, ws[4:]...)...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resets, seen := xconnectRun(t, tc.enable, headersFrame(1, false, tc.fields...))
			if tc.want != "" {
				if len(seen) != 1 || seen[0] != [4]string{"CONNECT", "websocket", "/chat?room=1", "/chat?room=1 0"} {
					t.Errorf("handler saw %q, want one stream %q", seen, tc.want)
				}
				return
			}
			if len(seen) != 0 {
				t.Errorf("handler ran for a malformed request: %q", seen)
			}
			if len(resets) != 1 || resets[0] != 1<<32|protocolError {
				t.Errorf("RST_STREAM %x, want stream 1 PROTOCOL_ERROR (%x)", resets, uint64(1<<32|protocolError))
			}
		})
	}
	// A plain CONNECT still works, with the authority as its target.
	_, _, seen := xconnectRun(t, true, headersFrame(1, false, ":method", "CONNECT", ":authority", "a.example:443"))
	if len(seen) != 1 || seen[0] != [4]string{"CONNECT", "", "", "a.example:443 0"} {
		t.Errorf("plain CONNECT: handler saw %q", seen)
	}
}
