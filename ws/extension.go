package ws

import (
	"strconv"
	"strings"
)

// ExtensionDeflate is permessage-deflate's extension token (RFC 7692).
const ExtensionDeflate = "permessage-deflate"

// DeflateParams are the parameters of one permessage-deflate offer or
// response (RFC 7692 section 7.1).
type DeflateParams struct {
	ServerNoContextTakeover bool
	ClientNoContextTakeover bool
	// ServerMaxWindowBits and ClientMaxWindowBits are 8 to 15, or 0 when
	// absent; ClientMaxWindowBits is -1 in an offer that names it without a
	// value (the client can honour a limit the server picks).
	ServerMaxWindowBits int
	ClientMaxWindowBits int
}

// DeflateConfig is a server's permessage-deflate policy.
type DeflateConfig struct {
	// ServerContextTakeover keeps the server's compression context from
	// one message to the next, when the client allows it: better ratio,
	// but a compressor (1.2 MB in compress/flate) held per connection.
	// Off, the server answers server_no_context_takeover and borrows a
	// pooled compressor for each message.
	ServerContextTakeover bool
	// ClientContextTakeover lets the client keep its context between
	// messages: the server then keeps the last 32 KiB of the client's
	// messages per connection. Off, the server answers
	// client_no_context_takeover.
	ClientContextTakeover bool
}

// forEachExtension calls f with each extension in the header values (a
// comma-separated list, each "name; param; param=value").
func forEachExtension(values []string, f func(name string, params []string) bool) {
	var params [8]string
	for _, v := range values {
		for ext := range strings.SplitSeq(v, ",") {
			parts := strings.Split(ext, ";")
			name := strings.TrimSpace(parts[0])
			if name == "" {
				continue
			}
			ps := params[:0]
			for _, p := range parts[1:] {
				ps = append(ps, strings.TrimSpace(p))
			}
			if !f(name, ps) {
				return
			}
		}
	}
}

// parseDeflate parses one permessage-deflate offer's or response's
// parameters; ok is false for an unknown or repeated parameter or a bad
// value, which makes the offer one to decline.
func parseDeflate(params []string) (p DeflateParams, ok bool) {
	var seen uint8
	for _, kv := range params {
		k, v, hasV := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		v = strings.Trim(strings.TrimSpace(v), `"`)
		var bit uint8
		switch k {
		case "server_no_context_takeover":
			bit = 1
			p.ServerNoContextTakeover = true
		case "client_no_context_takeover":
			bit = 2
			p.ClientNoContextTakeover = true
		case "server_max_window_bits":
			bit = 4
			n, err := strconv.Atoi(v)
			if !hasV || err != nil || n < 8 || n > 15 || v != strconv.Itoa(n) {
				return p, false
			}
			p.ServerMaxWindowBits = n
			hasV = false
		case "client_max_window_bits":
			bit = 8
			p.ClientMaxWindowBits = -1
			if hasV {
				n, err := strconv.Atoi(v)
				if err != nil || n < 8 || n > 15 || v != strconv.Itoa(n) {
					return p, false
				}
				p.ClientMaxWindowBits = n
				hasV = false
			}
		default:
			return p, false
		}
		if hasV || seen&bit != 0 {
			return p, false
		}
		seen |= bit
	}
	return p, true
}

// NegotiateDeflate picks the first permessage-deflate offer in the client's
// Sec-WebSocket-Extensions values that this server can honour, and returns
// the parameters in force and the response's extension value. ok is false
// when no offer is acceptable (the connection goes on uncompressed).
//
// An offer with server_max_window_bits is accepted with the same value:
// below 15 the server must compress with Compressor.HuffmanOnly (compress/flate's
// LZ77 always uses a 32 KiB window; Huffman-only output uses none). Any
// client window inflates with a 32 KiB one, so client_max_window_bits needs
// no answer.
func NegotiateDeflate(values []string, cfg DeflateConfig) (p DeflateParams, response string, ok bool) {
	forEachExtension(values, func(name string, params []string) bool {
		if name != ExtensionDeflate {
			return true
		}
		offer, valid := parseDeflate(params)
		if !valid {
			return true
		}
		p = DeflateParams{
			ServerNoContextTakeover: offer.ServerNoContextTakeover || !cfg.ServerContextTakeover,
			ClientNoContextTakeover: offer.ClientNoContextTakeover || !cfg.ClientContextTakeover,
			ServerMaxWindowBits:     offer.ServerMaxWindowBits,
		}
		response = p.String()
		ok = true
		return false
	})
	return p, response, ok
}

// HuffmanOnly reports whether the side whose window limit is bits (a
// *_max_window_bits value in force, 0 if none) must compress without LZ77.
func HuffmanOnly(bits int) bool { return bits > 0 && bits < 15 }

// String is p as an extension value: "permessage-deflate" and its parameters.
func (p DeflateParams) String() string {
	s := ExtensionDeflate
	if p.ServerNoContextTakeover {
		s += "; server_no_context_takeover"
	}
	if p.ClientNoContextTakeover {
		s += "; client_no_context_takeover"
	}
	if p.ServerMaxWindowBits > 0 {
		s += "; server_max_window_bits=" + strconv.Itoa(p.ServerMaxWindowBits)
	}
	switch {
	case p.ClientMaxWindowBits > 0:
		s += "; client_max_window_bits=" + strconv.Itoa(p.ClientMaxWindowBits)
	case p.ClientMaxWindowBits < 0:
		s += "; client_max_window_bits"
	}
	return s
}

// ClientOffer is the Sec-WebSocket-Extensions value a client sends to offer
// permessage-deflate, asking for no context takeover in the directions
// noServer / noClient name.
func ClientOffer(noServerTakeover, noClientTakeover bool) string {
	return DeflateParams{
		ServerNoContextTakeover: noServerTakeover,
		ClientNoContextTakeover: noClientTakeover,
		ClientMaxWindowBits:     -1,
	}.String()
}

// AcceptDeflateResponse checks a server's Sec-WebSocket-Extensions values
// against a client's offer: nil (ok, no compression), or one
// permessage-deflate, whose client_max_window_bits below 15 the client
// honours with Compressor.HuffmanOnly.
func AcceptDeflateResponse(values []string) (p DeflateParams, on bool, err error) {
	forEachExtension(values, func(name string, params []string) bool {
		if name != ExtensionDeflate || on {
			err = &Error{CloseMandatoryExt, "server accepted an extension that was not offered: " + name}
			return false
		}
		var valid bool
		p, valid = parseDeflate(params)
		if !valid || p.ClientMaxWindowBits < 0 {
			err = &Error{CloseProtocolError, "invalid permessage-deflate response"}
			return false
		}
		on = true
		return true
	})
	return p, on && err == nil, err
}
