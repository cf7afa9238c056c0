package h3

import (
	"bytes"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// Field-section validation (RFC 9114 §4.2–4.3, RFC 9220) and the hand-over
// to the h1.Request every riptide protocol fills.

// RequestHead is a validated request field section: the pseudo-header
// fields and the regular fields, all slices of the decoded fields.
type RequestHead struct {
	Method, Scheme, Authority, Path []byte
	// Protocol is the :protocol of an extended CONNECT (RFC 9220), or nil.
	Protocol []byte
	// Fields are the regular fields, in order.
	Fields []Field
	// Host is :authority, or else the host field's value.
	Host []byte
	// ContentLength is the content-length value, or -1 when absent.
	ContentLength int64
}

// Parse validates a decoded request field section (RFC 9114 §4.3.1): the
// pseudo-header fields first, each once, :method always, :scheme and :path
// unless the method is CONNECT, which instead requires :authority and
// forbids them — except an extended CONNECT (:protocol, allowed only when
// extendedConnect, the server having sent SETTINGS_ENABLE_CONNECT_PROTOCOL),
// which requires all four. :authority or host for http and https, the same
// if both. Field names lower case tokens, values without control bytes
// other than HTAB; no connection-specific field; te only "trailers";
// content-length digits, repeated only with the same value. Every failure
// is a malformed request, a stream error of type H3_MESSAGE_ERROR.
func (r *RequestHead) Parse(fields []Field, extendedConnect bool) error {
	*r = RequestHead{ContentLength: -1}
	i := 0
	for ; i < len(fields) && len(fields[i].Name) > 0 && fields[i].Name[0] == ':'; i++ {
		f := &fields[i]
		var p *[]byte
		switch string(f.Name) {
		case ":method":
			p = &r.Method
		case ":scheme":
			p = &r.Scheme
		case ":authority":
			p = &r.Authority
		case ":path":
			p = &r.Path
		case ":protocol":
			p = &r.Protocol
		default:
			return ErrUnknownPseudo
		}
		if *p != nil {
			return ErrDuplicatePseudo
		}
		if !h1.ValidHeaderValue(f.Value) {
			return ErrBadFieldValue
		}
		*p = f.Value[:len(f.Value):len(f.Value)]
	}
	r.Fields = fields[i:len(fields):len(fields)]
	var host []byte
	for j := range r.Fields {
		f := &r.Fields[j]
		if err := checkRegular(f); err != nil {
			return err
		}
		switch string(f.Name) {
		case "host":
			if host != nil {
				return ErrBadAuthority
			}
			host = f.Value
		case "content-length":
			n, ok := ascii.ParseDigits(f.Value)
			if !ok || r.ContentLength >= 0 && r.ContentLength != n {
				return ErrBadContentLength
			}
			r.ContentLength = n
		}
	}
	return r.checkPseudo(host, extendedConnect)
}

// checkPseudo applies the pseudo-header rules of RFC 9114 §4.3.1 and
// RFC 9220 §4.
func (r *RequestHead) checkPseudo(host []byte, extendedConnect bool) error {
	if len(r.Method) == 0 {
		return ErrMissingPseudo
	}
	if !h1.IsToken(r.Method) {
		return ErrBadFieldValue
	}
	connect := string(r.Method) == "CONNECT"
	switch {
	case r.Protocol != nil:
		if !connect || !extendedConnect {
			return ErrProtocolNotConnect
		}
		if r.Scheme == nil || r.Path == nil || r.Authority == nil {
			return ErrMissingPseudo
		}
	case connect:
		if r.Scheme != nil || r.Path != nil {
			return ErrConnectPseudo
		}
		if len(r.Authority) == 0 {
			return ErrMissingPseudo
		}
	default:
		if r.Scheme == nil || r.Path == nil {
			return ErrMissingPseudo
		}
	}
	if r.Path != nil {
		// Not empty; for http and https origin-form, or "*" for OPTIONS
		// (§4.3.1).
		web := string(r.Scheme) == "http" || string(r.Scheme) == "https"
		switch {
		case len(r.Path) == 0:
			return ErrBadPath
		case web && r.Path[0] != '/' && !(string(r.Path) == "*" && string(r.Method) == "OPTIONS"):
			return ErrBadPath
		}
	}
	// Host: :authority or host, not empty, equal if both (§4.3.1).
	switch {
	case r.Authority != nil && host != nil && !bytes.Equal(r.Authority, host):
		return ErrBadAuthority
	case r.Authority != nil:
		r.Host = r.Authority
	default:
		r.Host = host
	}
	web := string(r.Scheme) == "http" || string(r.Scheme) == "https"
	if (r.Authority != nil || host != nil || web) && len(r.Host) == 0 {
		return ErrBadAuthority
	}
	// host[:port] without userinfo (§4.3.1); a plain CONNECT's with a port
	// (RFC 9110 §9.3.6).
	if len(r.Host) > 0 && !ascii.ValidAuthority(r.Host, connect && r.Protocol == nil) {
		return ErrBadAuthority
	}
	return nil
}

// checkRegular checks a regular field (RFC 9114 §4.2, §4.2.1).
func checkRegular(f *Field) error {
	if len(f.Name) > 0 && f.Name[0] == ':' {
		return ErrPseudoAfterRegular
	}
	if !h1.ValidHeaderName(f.Name) {
		return ErrBadFieldName
	}
	for _, c := range f.Name {
		if 'A' <= c && c <= 'Z' {
			return ErrUppercaseName
		}
	}
	if !h1.ValidHeaderValue(f.Value) {
		return ErrBadFieldValue
	}
	switch string(f.Name) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return ErrConnectionSpecific
	case "te":
		if string(f.Value) != "trailers" {
			return ErrBadTE
		}
	}
	return nil
}

// CheckTrailers validates a trailer section: regular fields only (RFC 9114
// §4.3), with the rules of Parse.
func CheckTrailers(fields []Field) error {
	for i := range fields {
		f := &fields[i]
		if len(f.Name) > 0 && f.Name[0] == ':' {
			return ErrPseudoInTrailers
		}
		if err := checkRegular(f); err != nil {
			return err
		}
	}
	return nil
}

// CheckBodyLength checks the DATA received so far, got bytes, against a
// declared content-length (-1: none): more than declared, or at the end of
// the stream (ended) a different amount, is malformed (RFC 9114 §4.1.2).
func CheckBodyLength(declared, got int64, ended bool) error {
	if declared < 0 {
		return nil
	}
	if got > declared || ended && got != declared {
		return ErrBodyLength
	}
	return nil
}

// Build resets req and fills it the way riptide's HTTP/2 door does: the
// method and target (the :path, or the :authority for CONNECT) as an
// HTTP/1.1 request line, Host, the regular fields in order and
// ContentLength (the declared length, or -1: unknown; the caller sets 0
// when the stream ended with the HEADERS). req's slices point at r's, so
// at the decoder's buffer. An invalid target is h1.ErrBadTarget.
//
// An extended CONNECT (RFC 9220) is method CONNECT with the :path as an
// origin-form target (h1.Request.SetExtendedConnectLine); its :protocol,
// which an h1.Request has no place for, stays in r.Protocol.
func (r *RequestHead) Build(req *h1.Request) error {
	req.Reset()
	var err error
	switch {
	case r.Protocol != nil:
		err = req.SetExtendedConnectLine(r.Method, r.Path)
	case string(r.Method) == "CONNECT":
		err = req.SetRequestLine(r.Method, r.Authority, 1)
	default:
		err = req.SetRequestLine(r.Method, r.Path, 1)
	}
	if err != nil {
		return err
	}
	req.Host = r.Host
	for i := range r.Fields {
		req.AddHeader(r.Fields[i].Name, r.Fields[i].Value)
	}
	req.ContentLength = r.ContentLength
	return nil
}
