package h1

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/internal/ascii"
)

// The request vectors of Node.js's llhttp parser (MIT, testdata/llhttp/LICENSE)
// are driven through the parser here. Each case is an http block (the raw
// bytes, in llhttp's notation) and a log block (llhttp's expected parse
// trace). llhttp parses a whole connection, bodies and pipelined requests
// included, so the driver below does the same with Request.Parse and
// ChunkedDecoder.

type llhttpCase struct {
	name    string // file.md/heading
	typ     string // meta "type"
	input   []byte
	log     []string
	lenient bool
	// skipBody: llhttp's application told it the message has no body.
	skipBody bool
}

// llhttpMessage is what a log says about one request.
type llhttpMessage struct {
	method, url string
	headers     [][2]string
	complete    bool // llhttp reached the end of the head
}

var (
	metaRE = regexp.MustCompile(`"type"\s*:\s*"([^"]+)"`)
	spanRE = regexp.MustCompile(`^off=\d+ len=\d+ span\[(\w+)\]="(.*)"$`)
)

// llhttpCases reads every case in testdata/llhttp/*.md.
func llhttpCases(t testing.TB) []llhttpCase {
	t.Helper()
	files, err := filepath.Glob("testdata/llhttp/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no llhttp vectors: %v", err)
	}
	sort.Strings(files)
	var out []llhttpCase
	seen := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		lines := strings.Split(string(raw), "\n")
		var heading, typ string
		skipBody := false
		var httpBlock, logBlock []string
		haveHTTP := false
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case strings.HasPrefix(l, "#"):
				heading = strings.TrimSpace(strings.TrimLeft(l, "#"))
				typ, haveHTTP = "", false
			case strings.HasPrefix(l, "<!-- meta="):
				if m := metaRE.FindStringSubmatch(l); m != nil {
					typ = m[1]
				}
				skipBody = strings.Contains(l, `"skipBody": true`)
			case l == "```http" || l == "```log":
				var block []string
				for i++; i < len(lines) && lines[i] != "```"; i++ {
					block = append(block, lines[i])
				}
				if l == "```http" {
					httpBlock, haveHTTP = block, true
					continue
				}
				logBlock = block
				if !haveHTTP {
					continue
				}
				name := base + "/" + heading
				seen[name]++
				if seen[name] > 1 {
					name += " #" + strconv.Itoa(seen[name])
				}
				out = append(out, llhttpCase{
					name:     name,
					typ:      typ,
					input:    llhttpInput(strings.Join(httpBlock, "\n")),
					log:      logBlock,
					lenient:  strings.HasPrefix(base, "lenient-") || strings.Contains(typ, "lenient"),
					skipBody: skipBody,
				})
				haveHTTP = false
			}
		}
	}
	return out
}

// llhttpInput turns an http block into bytes the way llhttp's test runner
// does: a backslash before a newline joins the lines, every newline becomes
// CRLF, and \r \n \t \f \xHH \OOO escapes become the bytes they name.
func llhttpInput(s string) []byte {
	s = strings.ReplaceAll(s, "\\\n", "")
	s = strings.ReplaceAll(s, "\n", "\r\n")
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b = append(b, c)
			continue
		}
		switch n := s[i+1]; {
		case n == 'r':
			b, i = append(b, '\r'), i+1
		case n == 'n':
			b, i = append(b, '\n'), i+1
		case n == 't':
			b, i = append(b, '\t'), i+1
		case n == 'f':
			b, i = append(b, '\f'), i+1
		case n == 'x':
			j := i + 2
			for j < len(s) && j < i+4 && ascii.IsHex(s[j]) {
				j++
			}
			v, _ := strconv.ParseUint(s[i+2:j], 16, 8)
			b, i = append(b, byte(v)), j-1
		case n >= '0' && n <= '7':
			j := i + 1
			for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i+1:j], 8, 8)
			b, i = append(b, byte(v)), j-1
		default:
			b = append(b, c)
		}
	}
	return b
}

// expectError reports whether the log ends in an error. Codes 21-23 are
// llhttp pausing (on request, on CONNECT/Upgrade), not errors.
func (c *llhttpCase) expectError() bool {
	for _, l := range c.log {
		if i := strings.Index(l, " finish="); i >= 0 {
			// request-finish cases: llhttp_finish's verdict at EOF, 0 = fine.
			if l[i+len(" finish="):] != "0" {
				return true
			}
		}
		if i := strings.Index(l, " error code="); i >= 0 {
			code, _ := strconv.Atoi(strings.Fields(l[i+len(" error code="):])[0])
			if code < 21 || code > 23 {
				return true
			}
		}
	}
	return false
}

// messages extracts method, url and headers of each request in the log.
func (c *llhttpCase) messages() []llhttpMessage {
	var out []llhttpMessage
	var cur *llhttpMessage
	last := ""
	for _, l := range c.log {
		if strings.HasSuffix(l, " message begin") {
			out = append(out, llhttpMessage{})
			cur, last = &out[len(out)-1], ""
			continue
		}
		if strings.Contains(l, " headers complete") && cur != nil {
			cur.complete = true
		}
		m := spanRE.FindStringSubmatch(l)
		if m == nil || cur == nil {
			if strings.Contains(l, " complete") {
				last = ""
			}
			continue
		}
		kind, val := m[1], m[2]
		switch kind {
		case "method":
			cur.method += val
		case "url":
			cur.url += val
		case "header_field":
			if last == kind {
				cur.headers[len(cur.headers)-1][0] += val
			} else {
				cur.headers = append(cur.headers, [2]string{val, ""})
			}
		case "header_value":
			if len(cur.headers) > 0 {
				cur.headers[len(cur.headers)-1][1] += val
			}
		}
		last = kind
	}
	// Only requests whose head llhttp finished are compared: riptide reports
	// nothing for a head that has not ended.
	done := out[:0]
	for _, m := range out {
		if m.complete {
			done = append(done, m)
		}
	}
	return done
}

// driven is what riptide made of a whole llhttp input.
type driven struct {
	err  error
	msgs []llhttpMessage
}

// errDataAfterClose stands for llhttp's "Data after Connection: close": a
// server stops reading once a request says close.
var errDataAfterClose = errors.New("data after Connection: close")

// errIncomplete stands for llhttp's "Invalid EOF state" on request-finish
// cases: the input ended inside a message.
var errIncomplete = errors.New("input ends inside a message")

// drive runs a whole connection's input through the request parser and
// chunked decoder. finish says the input is followed by EOF.
// With addHost, a request that lacks only a Host field is given one (after
// its request line) and parsing goes on, so that the rest of a vector written
// for a parser that does not check Host is still compared.
func drive(in []byte, finish, addHost, skipBody bool) driven {
	var d driven
	var r Request
	var cd ChunkedDecoder
	buf := in
	for len(buf) > 0 {
		r.Reset()
		n, err := r.Parse(buf, nil)
		added := false
		if err == ErrMissingHost && addHost {
			buf, added = withHost(buf), true
			r.Reset()
			n, err = r.Parse(buf, nil)
		}
		if err == ErrNeedMore {
			if len(bytes.Trim(buf, "\r\n")) == 0 {
				return d
			}
			// llhttp reports errors byte by byte; riptide validates a head
			// once it is complete. To compare verdicts on vectors that stop
			// inside a head, end the head and see what riptide says then.
			d.err = completedHeadErr(buf)
			if d.err == nil && finish {
				d.err = errIncomplete
			}
			return d
		}
		if err != nil {
			d.err = err
			return d
		}
		m := llhttpMessage{method: string(r.Method), url: string(r.Target)}
		for i, h := range r.Headers {
			if added && i == 0 {
				continue
			}
			m.headers = append(m.headers, [2]string{string(h.Name), string(h.Value)})
		}
		d.msgs = append(d.msgs, m)
		buf = buf[n:]
		if r.Form == AuthorityForm || r.Upgrade {
			return d // the connection is now a tunnel
		}
		switch {
		case skipBody:
		case r.Chunked:
			cd.Reset()
			for !cd.Done() {
				n, _, err := cd.Decode(buf)
				if err == ErrNeedMore {
					if finish {
						d.err = errIncomplete
					}
					return d
				}
				if err != nil {
					d.err = err
					return d
				}
				buf = buf[n:]
			}
			// llhttp reports trailer fields as more header fields.
			for _, h := range cd.Trailers {
				m.headers = append(m.headers, [2]string{string(h.Name), string(h.Value)})
			}
			d.msgs[len(d.msgs)-1] = m
		case r.ContentLength > int64(len(buf)):
			if finish {
				d.err = errIncomplete
			}
			return d
		default:
			buf = buf[r.ContentLength:]
		}
		if r.Close && len(buf) > 0 {
			d.err = errDataAfterClose
			return d
		}
	}
	return d
}

// withHost returns a copy of buf with "Host: h" after the request line.
func withHost(buf []byte) []byte {
	start := 0
	for bytes.HasPrefix(buf[start:], []byte("\r\n")) {
		start += 2
	}
	eol := start + bytes.IndexByte(buf[start:], '\n') + 1
	out := append([]byte(nil), buf[:eol]...)
	out = append(out, "Host: h\r\n"...)
	return append(out, buf[eol:]...)
}

// completedHeadErr parses buf, an incomplete head, after ending it with
// CRLFs (and a Host field if that is all it lacks).
func completedHeadErr(buf []byte) error {
	end := "\r\n\r\n"
	if bytes.HasSuffix(buf, []byte("\r\n")) {
		end = "\r\n"
	}
	var r Request
	head := append(bytes.Clone(buf), end...)
	_, err := r.Parse(head, nil)
	if err == ErrMissingHost {
		head = append(bytes.Clone(buf), end[:len(end)-2]+"Host: h\r\n\r\n"...)
		r.Reset()
		_, err = r.Parse(head, nil)
	}
	if err == ErrNeedMore {
		return nil
	}
	return err
}

// llhttpDisagreements lists every llhttp case whose outcome riptide
// deliberately does not share, with the reason. Cases from lenient-*.md (and
// cases run in a lenient mode) are expected to be rejected and so are listed
// only when riptide accepts them.
var llhttpDisagreements = map[string]string{
	// RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. llhttp is
	// a tokenizer and leaves Host to the application, so its vectors often
	// omit it. For these cases the test checks that the missing Host is the
	// only objection and then compares the rest with a Host field supplied.
	"connection.md/Emitting part of body and pausing":                                       whyNoHost,
	"connection.md/Multiple tokens with folding and LWS":                                    whyNoHost,
	"connection.md/Restarting when keep-alive is explicitly":                                whyNoHost,
	"connection.md/Sample":                                                                  whyNoHost,
	"connection.md/Setting a flag and pausing":                                              whyNoHost,
	"connection.md/Setting flag":                                                            whyNoHost,
	"connection.md/Setting flag on `close`":                                                 whyNoHost,
	"connection.md/Setting flag on `close` followed by tab":                                 whyNoHost,
	"content-length.md/Content-Length reset when no body is received":                       whyNoHost,
	"content-length.md/Spaces in `Content-Length` (surrounding)":                            whyNoHost,
	"content-length.md/Tabs in `Content-Length` (surrounding)":                              whyNoHost,
	"content-length.md/`Content-Length` with follow-up headers":                             whyNoHost,
	"content-length.md/`Content-Length` with zeroes":                                        whyNoHost,
	"finish.md/It should be safe to finish after GET request":                               whyNoHost,
	"method.md/REPORT request":                                                              whyNoHost,
	"pausing.md/on_chunk_complete":                                                          whyNoHost,
	"pausing.md/on_chunk_extension_name":                                                    whyNoHost,
	"pausing.md/on_chunk_extension_value":                                                   whyNoHost,
	"pausing.md/on_chunk_header":                                                            whyNoHost,
	"pausing.md/on_header_field_complete":                                                   whyNoHost,
	"pausing.md/on_header_value_complete":                                                   whyNoHost,
	"pausing.md/on_headers_complete":                                                        whyNoHost,
	"pausing.md/on_message_begin":                                                           whyNoHost,
	"pausing.md/on_message_complete":                                                        whyNoHost,
	"pausing.md/on_method_complete":                                                         whyNoHost,
	"pausing.md/on_protocol_complete":                                                       whyNoHost,
	"pausing.md/on_url_complete":                                                            whyNoHost,
	"pausing.md/on_version_complete":                                                        whyNoHost,
	"pipelining.md/Should parse multiple events":                                            whyNoHost,
	"sample.md/255 ASCII in header value":                                                   whyNoHost,
	"sample.md/DUMBPACK":                                                                    whyNoHost,
	"sample.md/Extended Characters":                                                         whyNoHost,
	"sample.md/No headers and no body":                                                      whyNoHost,
	"sample.md/One header and no body":                                                      whyNoHost,
	"sample.md/Prefix newline":                                                              whyNoHost,
	"sample.md/Request starting with CRLF":                                                  whyNoHost,
	"sample.md/Request with method starting with `H`":                                       whyNoHost,
	"sample.md/Simple request":                                                              whyNoHost,
	"transfer-encoding.md/Chunk extensions":                                                 whyNoHost,
	"transfer-encoding.md/Chunk extensions quoting":                                         whyNoHost,
	"transfer-encoding.md/POST with `Transfer-Encoding: chunked`":                           whyNoHost,
	"transfer-encoding.md/POST with `chunked` as last transfer-encoding":                    whyFragment,
	"transfer-encoding.md/POST with `chunked` as last transfer-encoding (multiple headers)": whyFragment,
	"transfer-encoding.md/Parse chunks with lowercase size":                                 whyNoHost,
	"transfer-encoding.md/Parse chunks with uppercase size":                                 whyNoHost,
	"transfer-encoding.md/Parsing and setting flag":                                         whyNoHost,
	"transfer-encoding.md/Trailing headers":                                                 whyNoHost,
	"transfer-encoding.md/Two chunks and triple zero prefixed end chunk":                    whyNoHost,
	"uri.md/Fragment in URI":                                                                whyFragment,
	"uri.md/Host terminated by a query string":                                              whyNoHost,
	"uri.md/Query URL with question mark":                                                   whyNoHost,
	"uri.md/`host:port` terminated by a query string":                                       whyNoHost,
	"uri.md/`host:port` terminated by a space":                                              whyNoHost,

	// riptide rejects, llhttp accepts.
	"method.md/M-SEARCH request":                   "RFC 9112 §3.2.4: asterisk-form is only for OPTIONS; SSDP's M-SEARCH * is HTTPU over UDP, not HTTP/1.1",
	"method.md/PRI request HTTP2":                  "RFC 9112 §3.2.4: asterisk-form is only for OPTIONS; llhttp pauses on PRI for the HTTP/2 preface, which a server must detect before handing bytes to an HTTP/1.1 parser (RFC 9113 §3.3)",
	"uri.md/Quotes in URI":                         "RFC 3986 §2: '\"' is not a URI character (llhttp's strict mode passes it through)",
	"uri.md/Query URL with vertical bar character": "RFC 3986 §2: '|' is not a URI character; it must be percent-encoded",
	"uri.md/`host:port` and basic auth":            "RFC 9110 §4.2.4: userinfo in an http(s) URI is deprecated and a recipient SHOULD treat it as an error",
	"method.md/ANNOUNCE request with RTSP":         "RFC 9112 §2.3: only HTTP-version is accepted; RTSP/1.0 is another protocol",
	"method.md/OPTIONS request with RTSP":          "RFC 9112 §2.3: only HTTP-version is accepted; RTSP/1.0 is another protocol",
	"method.md/SOURCE request with ICE":            "RFC 9112 §2.3: only HTTP-version is accepted; ICE/1.0 (SHOUTcast) is another protocol",
	"sample.md/No HTTP version":                    "RFC 9112 §3: the request-line must carry HTTP-version; HTTP/0.9 simple requests are not supported",

	// riptide accepts, llhttp rejects.
	"invalid.md/HTTP protocol and ANNOUNCE method": "RFC 9110 §9.1/§16.1: methods are an open set of tokens; llhttp only knows a fixed list and ties ANNOUNCE to RTSP. riptide leaves unknown methods to the application (501 there)",
}

// withHostSuffix marks an entry for a vector's second run, the one with a
// Host field supplied.
const withHostSuffix = " (with Host)"

// whyFragment is the reason for the llhttp vectors whose target carries a
// fragment ("/url#frag"), which riptide rejects before looking at Host.
const whyFragment = "RFC 9112 §3.2: a request-target has no fragment (origin-form is absolute-path [ \"?\" query ]); the client must strip it, so riptide answers 400 (Http11Probe RFC9112-3.2-FRAGMENT-IN-TARGET)"

// whyNoHost is the reason for the llhttp vectors that lack a Host field.
const whyNoHost = "RFC 9112 §3.2: HTTP/1.1 request without Host (llhttp does not check Host)"

func TestLLHTTPVectors(t *testing.T) {
	cases := llhttpCases(t)
	if len(cases) < 100 {
		t.Fatalf("only %d llhttp cases found; the reader is broken", len(cases))
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			finish := c.typ == "request-finish"
			// A lenient vector must be rejected for what it tests, not for a
			// missing Host, so Host is supplied for those.
			got := drive(c.input, finish, c.lenient, c.skipBody)
			why, listed := llhttpDisagreements[c.name]
			if listed && why == whyNoHost {
				// Check the listed reason is the real one, then compare
				// everything else with a Host field supplied.
				if got.err != ErrMissingHost {
					t.Fatalf("listed as %q but riptide says %v", why, got.err)
				}
				got = drive(c.input, finish, true, c.skipBody)
				why, listed = llhttpDisagreements[c.name+withHostSuffix]
			}
			wantErr := c.expectError() || c.lenient
			agree := (got.err != nil) == wantErr
			if agree && !wantErr {
				if d := compareMessages(c.messages(), got.msgs); d != "" {
					agree = false
					if !listed {
						t.Errorf("parsed differently from llhttp: %s", d)
					}
				}
			}
			switch {
			case agree && listed:
				t.Errorf("listed as a disagreement (%s) but riptide now agrees with llhttp; remove it", why)
			case !agree && !listed && (got.err != nil) != wantErr:
				if os.Getenv("LLHTTP_DUMP") != "" {
					fmt.Printf("\t%q: %q,\n", c.name, fmt.Sprint(got.err))
				}
				t.Errorf("llhttp error=%v lenient=%v, riptide err=%v\ninput %q\nlog:\n%s",
					c.expectError(), c.lenient, got.err, c.input, strings.Join(c.log, "\n"))
			}
		})
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name] = true
	}
	for name := range llhttpDisagreements {
		if !names[strings.TrimSuffix(name, withHostSuffix)] {
			t.Errorf("llhttpDisagreements lists %q, which is not a case", name)
		}
	}
}

// latin1 decodes s as ISO-8859-1, the way llhttp's logs print bytes >= 0x80
// that are not UTF-8.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// compareMessages compares the requests llhttp logged with riptide's. Header
// values are compared without trailing whitespace, which RFC 9110 §5.5
// excludes from the value and llhttp keeps in its span.
func compareMessages(want []llhttpMessage, got []llhttpMessage) string {
	if len(got) < len(want) {
		return fmt.Sprintf("llhttp saw %d requests, riptide %d", len(want), len(got))
	}
	for i, w := range want {
		g := got[i]
		if w.method != "" && w.method != g.method {
			return fmt.Sprintf("request %d: method %q, want %q", i, g.method, w.method)
		}
		if w.url != "" && w.url != g.url {
			return fmt.Sprintf("request %d: target %q, want %q", i, g.url, w.url)
		}
		if len(w.headers) == 0 {
			continue
		}
		if len(w.headers) != len(g.headers) {
			return fmt.Sprintf("request %d: %d headers, want %d", i, len(g.headers), len(w.headers))
		}
		for j, h := range w.headers {
			want := strings.NewReplacer(`\t`, "\t", `\f`, "\f").Replace(h[1])
			want = strings.TrimRight(want, " \t")
			if h[0] != g.headers[j][0] || (want != g.headers[j][1] && want != latin1(g.headers[j][1])) {
				return fmt.Sprintf("request %d header %d: %q: %q, want %q: %q", i, j, g.headers[j][0], g.headers[j][1], h[0], h[1])
			}
		}
	}
	return ""
}
