package riptide

// The compat door's response header: the handler's http.Header turned
// into the engine's fields, cleaned as net/http cleans them (split from
// compat_writer.go, no code change).

import (
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// appendStatusLine is h1.AppendStatusLine, except that codes 600..999 are
// sent as they are: RFC 9110 §15 ends the valid codes at 599, but net/http
// sends any three-digit code a handler sets (its WriteHeader panics only
// outside 100..999) and the compat door does the same. Only compat
// handlers can set such a code: Ctx.SetStatus sends it as 500.
func appendStatusLine(dst []byte, code int) []byte {
	if code < 600 || code > 999 {
		return h1.AppendStatusLine(dst, code)
	}
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, " \r\n"...) // no reason phrase, as for 599
}

// serializeHeader turns the handler's header map into the engine's header
// lines: sorted by key (as net/http sends them), invalid names dropped, CR
// and LF in values replaced by spaces (net/http's rules), and the fields the
// engine manages (Content-Length, Transfer-Encoding, Connection) turned into
// its settings.
//
// The common header of a handler that sets only Content-Type and/or
// Content-Length is found with lookups rather than by iterating and
// sorting the map; w.known records it, so that finish can skip looking
// for trailers (see onlyKnownKeys).
func (w *compatWriter) serializeHeader() {
	r := &w.x.resp
	code := w.status
	r.status = code
	w.sniff = h1.BodyAllowed(code)
	w.known = 0
	h := w.header
	if len(h) == 0 {
		return
	}
	te := ""
	if known, cl, ct := knownKeys(h); known != 0 {
		// Sorted: "Content-Length" < "Content-Type". The names are
		// known: serializeField's cases for them are called directly.
		if known&knownCL != 0 {
			w.contentLength(cl)
		}
		if known&knownCT != 0 {
			w.contentType(ct)
		}
		w.known = known
	} else {
		for _, k := range w.sortedKeys() {
			w.serializeField(k, h[k], &te)
		}
	}
	if te != "" && te != "identity" {
		// A Transfer-Encoding overrides a Content-Length (net/http logs it).
		r.clen = -1
	}
}

// The keys of the header fast path (serializeHeader).
const (
	knownCL uint8 = 1 << iota // Content-Length
	knownCT                   // Content-Type
)

// knownKeys reports which of Content-Length and Content-Type h holds, with
// their values, when h holds no other key; otherwise known is 0.
func knownKeys(h http.Header) (known uint8, cl, ct []string) {
	if len(h) > 2 {
		return 0, nil, nil
	}
	n := 0
	cl, okCL := h["Content-Length"]
	if okCL {
		known |= knownCL
		n++
	}
	ct, okCT := h["Content-Type"]
	if okCT {
		known |= knownCT
		n++
	}
	if n != len(h) {
		return 0, nil, nil
	}
	return known, cl, ct
}

// onlyKnownKeys reports whether the header map still holds exactly the
// keys serializeHeader found by lookup, so nothing in it can be a trailer.
func (w *compatWriter) onlyKnownKeys() bool {
	if w.known == 0 {
		return false
	}
	known, _, _ := knownKeys(w.header)
	return known == w.known
}

// serializeField adds the header field k with values vs to the response
// head, or turns it into the engine's settings.
func (w *compatWriter) serializeField(k string, vs []string, te *string) {
	r := &w.x.resp
	code := w.status
	// checked: k is one of the names below, valid and not a trailer.
	checked := true
	switch k {
	case "Content-Type":
		w.contentType(vs)
		return
	case "Content-Length":
		w.contentLength(vs)
		return
	case "Transfer-Encoding":
		if h1.BodyAllowed(code) && len(vs) > 0 && transferEncodingRules(w.x.conn.ex.abilities()) {
			*te = vs[0]
			w.sniff = false
		}
		// The engine frames the body itself: chunked on HTTP/1.1.
		return
	case "Connection":
		rest := vs[:0:0]
		for _, v := range vs {
			switch {
			case ascii.HasToken(v, "close"):
				r.close = true
			case strings.EqualFold(strings.TrimSpace(v), "keep-alive"):
				// The engine says keep-alive itself where needed.
			default:
				rest = append(rest, v)
			}
		}
		vs = rest
	case "Content-Encoding":
		if len(vs) > 0 && vs[0] != "" {
			w.sniff = false
		}
	case "Date":
		r.userDate = true
	case "Server":
		r.userServer = true
	case "Alt-Svc":
		r.userAltSvc = true
	case "Trailer":
		w.trailers = true
	default:
		checked = false
	}
	if !checked {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			w.trailers = true
			return
		}
		if !h1.ValidHeaderName(k) {
			return
		}
	}
	for _, v := range vs {
		w.addField(&r.hdr, k, v)
	}
}

// contentType is serializeField for Content-Type: the handler's type, so
// none is sniffed; a 304 over HTTP/1.1 is sent without it, as net/http
// does.
func (w *compatWriter) contentType(vs []string) {
	w.sniff = false
	if w.status == http.StatusNotModified && !w.stream {
		return
	}
	r := &w.x.resp
	for _, v := range vs {
		w.addField(&r.hdr, "Content-Type", v)
	}
}

// contentLength is serializeField for Content-Length: the declared
// length, for the engine's framing.
func (w *compatWriter) contentLength(vs []string) {
	if h1.BodyAllowed(w.status) && len(vs) > 0 {
		if n, ok := contentLengthValue(vs[0]); ok {
			w.x.resp.clen = n
		}
	}
}

// addField adds the field name with value to h, the value cleaned as
// appendCleanValue does; on a stream a value that is not a valid field
// value (before trimming) is left out instead, as net/http's HTTP/2 server
// does (a valid one has no CR or LF: it is copied without a second scan).
// A value equal to the one it last found clean (w.clean) is added
// unchecked.
func (w *compatWriter) addField(h *headerFields, name, value string) {
	if len(value) == int(w.cleanLen) && w.cleanStream == w.stream && string(w.clean[:w.cleanLen]) == value {
		addField(h, name, value) // checked before: see clean
		return
	}
	if w.stream && !h1.ValidHeaderValue(value) {
		// As net/http's HTTP/2 server, which checks the value as the
		// handler set it: a trailing CR or LF drops it too.
		return
	}
	t := textproto.TrimString(value)
	if !w.stream && needsClean(t) {
		addFieldClean(h, name, t)
		return
	}
	addField(h, name, t)
	if len(t) == len(value) && len(value) <= cleanMax {
		w.cleanLen, w.cleanStream = uint8(copy(w.clean[:], value)), w.stream
	}
}

// cleanMax is the longest value compatWriter.clean holds: a Content-Type,
// a Cache-Control (the writer is held with a stream's Ctx: no more).
const cleanMax = 64

// sortedKeys returns the header map's keys, sorted, in a reused slice.
func (w *compatWriter) sortedKeys() []string {
	keys := w.keys[:0]
	for k := range w.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.keys = keys
	return keys
}

// addFieldClean adds a field to h with the value cleaned as
// appendCleanValue does.
func addFieldClean(h *headerFields, name, value string) {
	start := len(h.buf)
	h.buf = append(h.buf, name...)
	h.buf = appendCleanValue(h.buf, value)
	h.pushField(start, start+len(name))
}

// appendCleanValue appends value trimmed and with any CR, LF or NUL in it
// replaced by a space, as RFC 9110 §5.5 lets a recipient mend them (net/http
// replaces CR and LF only and sends NUL as it is).
func appendCleanValue(dst []byte, value string) []byte {
	value = textproto.TrimString(value)
	if !needsClean(value) {
		return append(dst, value...)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c == '\r' || c == '\n' || c == 0 {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// needsClean reports whether v holds a CR, LF or NUL, the bytes a field
// value must not carry (RFC 9110 §5.5), which appendCleanValue replaces.
func needsClean(v string) bool {
	return strings.IndexByte(v, '\r') >= 0 || strings.IndexByte(v, '\n') >= 0 || strings.IndexByte(v, 0) >= 0
}
