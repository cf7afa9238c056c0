package h1

import (
	"bytes"

	"github.com/riptide-http/riptide/internal/ascii"
)

// framing collects what the header fields say about message framing and
// connection handling, shared by requests and responses.
type framing struct {
	contentLength int64  // -1: none seen
	clValue       []byte // the first Content-Length value
	chunked       bool
	te            bool // a Transfer-Encoding field was present
	teUnknown     bool // a coding other than chunked was listed
	close         bool
	keepAlive     bool
	upgrade       bool
}

// scanFraming applies RFC 9112 §6 to the header fields: Content-Length must
// be digits, duplicates must agree (and then collapse); Transfer-Encoding is
// a list whose final coding must be chunked, listed once.
func scanFraming(hs []Header) (framing, error) {
	f := framing{contentLength: -1}
	chunkedLast := false
	for i := range hs {
		h := &hs[i]
		switch h.Key {
		case HeaderContentLength:
			n, ok := ascii.ParseDigits(h.Value)
			if !ok {
				return f, ErrBadContentLength
			}
			// Duplicates collapse only when byte-identical: "1" and "01"
			// are equal numbers, but a hop comparing strings would
			// disagree (RFC 9110 §8.6).
			if f.contentLength >= 0 && !bytes.Equal(f.clValue, h.Value) {
				return f, ErrDupContentLength
			}
			f.contentLength, f.clValue = n, h.Value
		case HeaderTransferEncoding:
			f.te = true
			if len(h.Value) == 0 {
				return f, ErrBadTransferEncoding
			}
			for v := h.Value; ; {
				var item []byte
				item, v = nextListItem(v)
				switch {
				case len(item) == 0:
					// RFC 9110 §5.6.1 lets a recipient skip empty list
					// elements, but parsers that do not are the other half of
					// a TE.TE smuggling pair, so they are refused here.
					return f, ErrBadTransferEncoding
				case chunkedLast:
					// Something follows chunked: chunked is not final.
					return f, ErrChunkedNotFinal
				case EqualFold(item, "chunked"):
					chunkedLast = true
				case !IsToken(item):
					// Includes parameters (";q=..."): no coding riptide
					// supports takes any.
					return f, ErrBadTransferEncoding
				default:
					f.teUnknown = true
				}
				if v == nil {
					break
				}
			}
		case HeaderConnection:
			for v := h.Value; len(v) > 0; {
				var item []byte
				item, v = nextListItem(v)
				switch {
				case EqualFold(item, "close"):
					f.close = true
				case EqualFold(item, "keep-alive"):
					f.keepAlive = true
				case EqualFold(item, "upgrade"):
					f.upgrade = true
				}
			}
		}
	}
	f.chunked = chunkedLast
	return f, nil
}

// nextListItem splits the first comma-separated element off a field value,
// trimmed of whitespace, and returns it with the rest of the list.
func nextListItem(v []byte) (item, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return trimOWS(v[:i]), v[i+1:]
	}
	return trimOWS(v), nil
}

// applyFraming validates Host and sets the body and connection fields of a
// request (RFC 9112 §3.2, §6.1, §6.3, §9.3).
func (r *Request) applyFraming() error {
	hosts := 0
	for i := range r.Headers {
		h := &r.Headers[i]
		switch h.Key {
		case HeaderHost:
			hosts++
			r.Host = h.Value
		case HeaderExpect:
			if EqualFold(h.Value, "100-continue") {
				r.Expect100 = true
			} else {
				r.ExpectOther = true
			}
		}
	}
	if hosts > 1 {
		return ErrDuplicateHost
	}
	if hosts == 0 && r.Minor == 1 {
		return ErrMissingHost
	}
	if hosts == 1 && !validHost(r.Host) {
		return ErrBadHost
	}
	if hosts == 1 && len(r.Host) == 0 && r.Form != AbsoluteForm {
		// RFC 9110 §4.2.1: an "http" URI with an empty host is invalid and
		// its recipient MUST reject it. Only absolute-form carries the
		// authority elsewhere (RFC 9112 §3.2.2 then ignores Host).
		return ErrBadHost
	}
	f, err := scanFraming(r.Headers)
	if f.te && r.Minor == 0 {
		// RFC 9112 §6.1: framing of an HTTP/1.0 message with
		// Transfer-Encoding is faulty, whatever the field says. Checked
		// before the field's own errors so the verdict does not depend on
		// its contents.
		return ErrTEOnHTTP10
	}
	if err != nil {
		return err
	}
	if f.te {
		switch {
		case f.contentLength >= 0:
			return ErrTEWithCL
		case !f.chunked:
			return ErrChunkedNotFinal
		case f.teUnknown:
			return ErrUnsupportedTE
		}
		r.Chunked = true
		r.ContentLength = -1
	} else if f.contentLength >= 0 {
		r.ContentLength = f.contentLength
	}
	if r.Minor == 0 {
		r.Close = !f.keepAlive || f.close
	} else {
		r.Close = f.close
	}
	// RFC 9110 §7.8: a server MUST ignore Upgrade in an HTTP/1.0 request.
	r.Upgrade = f.upgrade && r.known[HeaderUpgrade] != 0 && r.Minor == 1
	return nil
}
