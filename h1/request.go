package h1

import (
	"bytes"
	"unicode/utf8"

	"github.com/riptide-http/riptide/internal/ascii"
)

// Header is one header field line. Name and Value are slices into the buffer
// that was parsed; Value has surrounding whitespace removed. Key classifies
// Name for cheap lookups.
type Header struct {
	Name  []byte
	Value []byte
	Key   Known
}

// InlineHeaders is the number of header fields a Response holds without
// allocating, and the capacity of the header storage a Request allocates
// on first use (see Request.Reset).
const InlineHeaders = 64

// Limits bound what a parser accepts. A zero field takes its default.
type Limits struct {
	// MaxRequestLine bounds the request line (or status line) in bytes,
	// without CRLF. Default 8 KiB; exceeding it on a request is a 414.
	MaxRequestLine int
	// MaxHeaderLine bounds a single header field line. Default 8 KiB.
	MaxHeaderLine int
	// MaxHeadBytes bounds the whole head, request line included. Default 64 KiB.
	// Empty lines before the request line are bounded by it separately.
	MaxHeadBytes int
	// MaxHeaders bounds the number of header fields. Default 100. Fields
	// beyond InlineHeaders are held in a slice that is kept across Resets.
	MaxHeaders int
}

// DefaultLimits are the limits used when a nil *Limits is passed.
var DefaultLimits = Limits{MaxRequestLine: 8 << 10, MaxHeaderLine: 8 << 10, MaxHeadBytes: 64 << 10, MaxHeaders: 100}

func (l *Limits) norm() Limits {
	d := DefaultLimits
	if l == nil {
		return d
	}
	out := *l
	if out.MaxRequestLine <= 0 {
		out.MaxRequestLine = d.MaxRequestLine
	}
	if out.MaxHeaderLine <= 0 {
		out.MaxHeaderLine = d.MaxHeaderLine
	}
	if out.MaxHeadBytes <= 0 {
		out.MaxHeadBytes = d.MaxHeadBytes
	}
	if out.MaxHeaders <= 0 {
		out.MaxHeaders = d.MaxHeaders
	}
	return out
}

// TargetForm is the form of a request-target (RFC 9112 §3.2).
type TargetForm uint8

// Request-target forms.
const (
	OriginForm    TargetForm = iota // /path?query
	AbsoluteForm                    // http://host/path?query
	AuthorityForm                   // host:port, CONNECT only
	AsteriskForm                    // *, OPTIONS only
)

// Request is a parsed request head. All byte slices point into the buffer
// passed to Parse and are valid only while that buffer is. A Request is meant
// to be reused: Parse resets it.
type Request struct {
	Method []byte
	Target []byte
	Form   TargetForm
	// Path is the path component of the target (the whole target up to '?'
	// for origin-form; for absolute-form, the part after the authority, which
	// may be empty).
	Path []byte
	// Query is the part after the first '?', without the '?'. Nil when there
	// is no '?'.
	Query []byte
	// Major and Minor are the HTTP version: always 1.0 or 1.1.
	Major, Minor int
	// Headers are the header fields in order received.
	Headers []Header
	// Host is the Host header value (possibly empty on HTTP/1.0).
	Host []byte
	// ContentLength is the body length, 0 when there is no body and -1 when
	// the body is chunked.
	ContentLength int64
	// Chunked reports Transfer-Encoding: chunked.
	Chunked bool
	// Close reports that the connection must close after this exchange:
	// "Connection: close" on HTTP/1.1, or HTTP/1.0 without "keep-alive".
	Close bool
	// Expect100 reports "Expect: 100-continue".
	Expect100 bool
	// ExpectOther reports an Expect header with any other expectation; a
	// server should answer 417.
	ExpectOther bool
	// Upgrade reports that Connection lists "upgrade" and an Upgrade header is
	// present.
	Upgrade bool

	// scanned is how far a previous call scanned without finding the end of
	// the head, so that a head trickling in is not rescanned from the start.
	scanned int
	// known holds 1+index of the first header of each Known kind.
	known [numKnown]uint8
}

// Reset clears r for a new message, keeping the storage of Headers (its
// capacity), so that a reused Request parses without allocating. A
// Request without storage allocates room for InlineHeaders fields here
// (Parse resets). A caller that expects fewer fields may give it smaller
// storage first, Headers = make([]Header, 0, n): it grows as fields
// arrive (AddHeader, Parse) and is kept across Resets.
func (r *Request) Reset() {
	hs := r.Headers
	if cap(hs) == 0 {
		hs = make([]Header, 0, InlineHeaders)
	}
	r.Method, r.Target, r.Form, r.Path, r.Query = nil, nil, OriginForm, nil, nil
	r.Major, r.Minor = 0, 0
	r.Headers = hs[:0]
	r.Host = nil
	r.ContentLength, r.Chunked, r.Close = 0, false, false
	r.Expect100, r.ExpectOther, r.Upgrade = false, false, false
	r.known = [numKnown]uint8{}
	// A head abandoned half-way must not leave scan progress behind for the
	// next buffer (which may be shorter).
	r.scanned = 0
}

// Get returns the value of the first header named name (case-insensitive),
// or nil. It does not allocate.
func (r *Request) Get(name string) []byte { return getHeader(r.Headers, name) }

// Known returns the value of the first header of kind k, or nil.
func (r *Request) Known(k Known) []byte { return knownHeader(r.Headers, &r.known, k) }

// Parse parses a request head at the start of buf. It returns the length of
// the head (request line, header fields and the empty line) when it is
// complete; ErrNeedMore when buf holds a valid but incomplete head (call again
// with the same bytes plus more); or an *Error. Leading empty lines before the
// request line are skipped (RFC 9112 §2.2) and counted in n.
//
// Between calls that return ErrNeedMore the caller must not change the bytes
// already passed, but may move them to a larger buffer. Call Reset (or let a
// successful Parse) start the next request.
func (r *Request) Parse(buf []byte, lim *Limits) (n int, err error) {
	l := lim.norm()
	end, err := scanHead(buf, &r.scanned, l.MaxHeadBytes, l.MaxRequestLine, ErrURITooLong)
	if err != nil {
		if err != ErrNeedMore {
			r.scanned = 0
		}
		if err == ErrURITooLong {
			return 0, overlongRequestLine(buf, l.MaxRequestLine)
		}
		return 0, err
	}
	r.Reset()
	if err := r.parse(buf[:end], &l); err != nil {
		return 0, err
	}
	return end, nil
}

// scanHead finds the end of a head (just past CRLF CRLF), tolerating leading
// CRLFs. It rejects bare LF as soon as it is seen and enforces the first-line
// and total-size limits on incomplete input, so a trickled oversized head is
// refused without waiting for its end. *scanned carries progress across calls.
func scanHead(buf []byte, scanned *int, maxHead, maxFirst int, firstErr *Error) (int, error) {
	i := *scanned
	if i > len(buf) {
		// The caller broke the contract (new, shorter buffer without Reset);
		// rescan rather than index out of range.
		i = 0
	}
	// Skip leading empty lines. They count towards maxHead so that an endless
	// stream of CRLFs cannot keep the parser asking for more.
	start := 0
	for start+1 < len(buf) && buf[start] == '\r' && buf[start+1] == '\n' {
		start += 2
	}
	if start > maxHead {
		return 0, ErrHeaderTooLarge
	}
	if i < start {
		i = start
	}
	for {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			break
		}
		p := i + j
		if p == 0 || buf[p-1] != '\r' {
			return 0, ErrBadLineEnding
		}
		if p == start+1 {
			// A lone CRLF after the skipped ones cannot happen (skipped above);
			// "\r\n" right at start means an empty request line.
			return 0, ErrBadRequestLine
		}
		if p >= 3 && buf[p-2] == '\n' && buf[p-3] == '\r' && p-3 >= start {
			end := p + 1
			if end-start > maxHead {
				return 0, ErrHeaderTooLarge
			}
			*scanned = 0
			return end, nil
		}
		i = p + 1
	}
	*scanned = i
	// i is past the last LF seen, so i == start means the first line has not
	// ended yet (no need to search for an LF again).
	firstOpen := i == start
	if len(buf)-start > maxHead {
		if firstOpen {
			return 0, firstErr
		}
		return 0, ErrHeaderTooLarge
	}
	if firstOpen && len(buf)-start > maxFirst+1 {
		return 0, firstErr
	}
	return 0, ErrNeedMore
}

// parse parses a complete head (buf ends in CRLF CRLF, leading CRLFs allowed).
func (r *Request) parse(buf []byte, l *Limits) error {
	for len(buf) >= 2 && buf[0] == '\r' && buf[1] == '\n' {
		buf = buf[2:]
	}
	eol := bytes.IndexByte(buf, '\n') // present and preceded by CR: scanHead checked.
	line := buf[:eol-1]
	rest := buf[eol+1:]
	if len(line) > l.MaxRequestLine {
		return overlongRequestLine(line, l.MaxRequestLine)
	}
	if err := r.parseRequestLine(line); err != nil {
		return err
	}
	if err := parseHeaders(rest, &r.Headers, &r.known, l); err != nil {
		return err
	}
	return r.applyFraming()
}

// overlongRequestLine classifies a request line (possibly still
// incomplete, possibly after leading CRLFs) longer than max: 414 when the
// request-target makes it long, 400 when even the method does not end
// within the limit (RFC 9112 §3: such a method is longer than any the server
// implements; it is no URI).
func overlongRequestLine(line []byte, max int) *Error {
	for len(line) >= 2 && line[0] == '\r' && line[1] == '\n' {
		line = line[2:]
	}
	if bytes.IndexByte(line[:min(len(line), max)], ' ') < 0 {
		return ErrBadMethod
	}
	return ErrURITooLong
}

func (r *Request) parseRequestLine(line []byte) error {
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		if sp == 0 || bytes.IndexByte(line, '\t') >= 0 {
			return ErrBadRequestLine
		}
		return ErrBadRequestLine
	}
	r.Method = line[:sp]
	if !IsToken(r.Method) {
		return ErrBadMethod
	}
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return ErrBadRequestLine
	}
	r.Target = rest[:sp]
	ver := rest[sp+1:]
	if err := r.parseVersion(ver); err != nil {
		return err
	}
	return r.parseTarget()
}

// parseVersion accepts exactly "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3), and
// of those only 1.0 and 1.1.
func (r *Request) parseVersion(v []byte) error {
	maj, min, ok := parseVersion(v)
	if !ok {
		return ErrBadVersion
	}
	if maj != 1 || min > 1 {
		return ErrVersionNotSupp
	}
	r.Major, r.Minor = maj, min
	return nil
}

func parseVersion(v []byte) (maj, min int, ok bool) {
	if len(v) != 8 || string(v[:5]) != "HTTP/" || v[6] != '.' ||
		v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9' {
		return 0, 0, false
	}
	return int(v[5] - '0'), int(v[7] - '0'), true
}

func (r *Request) parseTarget() error {
	t := r.Target
	// One pass for the character set, UTF-8 and percent-encoding: eight
	// bytes at a time while none is a '%', >= 0x80 or invalid, then byte
	// by byte.
	i := 0
	for ; i+8 <= len(t); i += 8 {
		w := t[i : i+8]
		if plainTarget[w[0]]+plainTarget[w[1]]+plainTarget[w[2]]+plainTarget[w[3]]+
			plainTarget[w[4]]+plainTarget[w[5]]+plainTarget[w[6]]+plainTarget[w[7]] != 8 {
			break
		}
	}
	for ; i < len(t); i++ {
		c := t[i]
		if !targetTable[c] {
			return ErrBadTarget
		}
		if c >= utf8.RuneSelf {
			// Raw UTF-8: whole, shortest-form sequences only.
			r, n := utf8.DecodeRune(t[i:])
			if r == utf8.RuneError && n <= 1 {
				return ErrBadTarget
			}
			i += n - 1
			continue
		}
		if c == '%' {
			if i+2 >= len(t) || !ascii.IsHex(t[i+1]) || !ascii.IsHex(t[i+2]) {
				if q := bytes.IndexByte(t[:i], '?'); q >= 0 {
					// The query is opaque to the server: a stray '%'
					// there ("?q=100%") is the application's to judge,
					// as net/http leaves it (URL.RawQuery), and can
					// smuggle nothing. The path's escapes must be valid.
					continue
				}
				return ErrBadTarget
			}
			i += 2
		}
	}
	isConnect := string(r.Method) == "CONNECT"
	switch {
	case isConnect:
		// RFC 9112 §3.2.3: authority-form only, host ":" port.
		if !ascii.ValidAuthority(t, true) {
			return ErrBadTarget
		}
		r.Form = AuthorityForm
		return nil
	case t[0] == '/':
		r.Form = OriginForm
		r.Path, r.Query = splitQuery(t)
		return nil
	case len(t) == 1 && t[0] == '*':
		if string(r.Method) != "OPTIONS" {
			return ErrBadTarget
		}
		r.Form = AsteriskForm
		return nil
	}
	// absolute-form: scheme "://" authority path-abempty [ "?" query ]
	colon := bytes.IndexByte(t, ':')
	if colon <= 0 || !validScheme(t[:colon]) || len(t) < colon+3 || t[colon+1] != '/' || t[colon+2] != '/' {
		return ErrBadTarget
	}
	auth := t[colon+3:]
	slash := bytes.IndexAny(auth, "/?")
	path := []byte(nil)
	if slash >= 0 {
		path = auth[slash:]
		auth = auth[:slash]
	}
	if len(auth) == 0 || !ascii.ValidAuthority(auth, false) {
		return ErrBadTarget
	}
	r.Form = AbsoluteForm
	r.Path, r.Query = splitQuery(path)
	return nil
}

func splitQuery(t []byte) (path, query []byte) {
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		return t[:q], t[q+1:]
	}
	return t, nil
}

func validScheme(s []byte) bool {
	if len(s) == 0 || !ascii.IsAlpha(s[0]) {
		return false
	}
	for _, c := range s[1:] {
		if !ascii.IsAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validPercent checks that every '%' starts a two-hex-digit escape.
func validPercent[T ~string | ~[]byte](t T) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == '%' {
			if i+2 >= len(t) || !ascii.IsHex(t[i+1]) || !ascii.IsHex(t[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// validHost checks a Host field value (RFC 9112 §3.2): uri-host [ ":" port ].
// An empty value is syntactically valid (a client sends it when the target
// URI has no authority); applyFraming decides whether the target allows it.
func validHost(h []byte) bool {
	return len(h) == 0 || validAuthority(h)
}

// parseHeaders parses header field lines up to and including the final empty
// line. buf must end in CRLF CRLF (or be just CRLF).
func parseHeaders(buf []byte, hs *[]Header, known *[numKnown]uint8, l *Limits) error {
	// Work on a local slice and store it back once: appending through the
	// pointer costs a reload per field.
	h, err := parseFields(buf, *hs, known, l)
	*hs = h
	return err
}

func parseFields(buf []byte, h []Header, known *[numKnown]uint8, l *Limits) ([]Header, error) {
	for {
		eol := bytes.IndexByte(buf, '\n')
		line := buf[:eol-1]
		buf = buf[eol+1:]
		if len(line) == 0 {
			return h, nil
		}
		if len(line) > l.MaxHeaderLine {
			return h, ErrHeaderLineLarge
		}
		// One pass finds the colon and checks the name is a token.
		colon := 0
		for colon < len(line) && tokenTable[line[colon]] {
			colon++
		}
		if colon == len(line) || line[colon] != ':' {
			return h, nameError(line, colon)
		}
		if colon == 0 {
			return h, ErrBadHeaderName
		}
		name, value := line[:colon], line[colon+1:]
		if !validValue(value) {
			return h, ErrBadHeaderValue
		}
		if len(h) >= l.MaxHeaders {
			return h, ErrTooManyHeaders
		}
		k := Lookup(name)
		h = append(h, Header{Name: name, Value: trimOWS(value), Key: k})
		if k != Unknown && known[k] == 0 && len(h) < 256 {
			known[k] = uint8(len(h))
		}
	}
}

// nameError classifies a field line whose name stops at line[i] without a
// colon: obs-fold, whitespace before the colon, or a bad name.
func nameError(line []byte, i int) error {
	switch {
	case line[0] == ' ' || line[0] == '\t':
		return ErrObsFold
	case i == len(line):
		return ErrBadHeaderName // no colon at all
	case line[i] == ' ' || line[i] == '\t':
		if j := bytes.IndexByte(line[i:], ':'); j > 0 && onlyWS(line[i:i+j]) {
			return ErrSpaceBeforeColon
		}
	}
	return ErrBadHeaderName
}

func onlyWS(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}
