package h1

import "github.com/riptide-http/riptide/internal/ascii"

// Known identifies a header field that the codec or its users look up often.
// Parsers tag each Header with its Known value so lookups compare one byte
// instead of folding strings.
type Known uint8

// Known header fields. Unknown is the zero value.
const (
	Unknown Known = iota
	HeaderHost
	HeaderContentLength
	HeaderTransferEncoding
	HeaderConnection
	HeaderExpect
	HeaderUpgrade
	HeaderContentType
	HeaderCookie
	HeaderUserAgent
	HeaderAccept
	HeaderAcceptEncoding
	HeaderAcceptLanguage
	HeaderAuthorization
	HeaderTE
	HeaderTrailer
	HeaderDate
	HeaderServer
	HeaderSetCookie
	HeaderContentEncoding
	HeaderCacheControl
	HeaderKeepAlive
	HeaderIfModifiedSince
	HeaderIfNoneMatch
	HeaderRange
	HeaderReferer
	HeaderOrigin
	HeaderXForwardedFor
	HeaderLocation
	HeaderLastModified
	HeaderETag
	HeaderVary
	numKnown
)

// knownNames holds each Known header's canonical (net/http) spelling.
var knownNames = [numKnown]string{
	Unknown:                "",
	HeaderHost:             "Host",
	HeaderContentLength:    "Content-Length",
	HeaderTransferEncoding: "Transfer-Encoding",
	HeaderConnection:       "Connection",
	HeaderExpect:           "Expect",
	HeaderUpgrade:          "Upgrade",
	HeaderContentType:      "Content-Type",
	HeaderCookie:           "Cookie",
	HeaderUserAgent:        "User-Agent",
	HeaderAccept:           "Accept",
	HeaderAcceptEncoding:   "Accept-Encoding",
	HeaderAcceptLanguage:   "Accept-Language",
	HeaderAuthorization:    "Authorization",
	HeaderTE:               "Te",
	HeaderTrailer:          "Trailer",
	HeaderDate:             "Date",
	HeaderServer:           "Server",
	HeaderSetCookie:        "Set-Cookie",
	HeaderContentEncoding:  "Content-Encoding",
	HeaderCacheControl:     "Cache-Control",
	HeaderKeepAlive:        "Keep-Alive",
	HeaderIfModifiedSince:  "If-Modified-Since",
	HeaderIfNoneMatch:      "If-None-Match",
	HeaderRange:            "Range",
	HeaderReferer:          "Referer",
	HeaderOrigin:           "Origin",
	HeaderXForwardedFor:    "X-Forwarded-For",
	HeaderLocation:         "Location",
	HeaderLastModified:     "Last-Modified",
	HeaderETag:             "Etag",
	HeaderVary:             "Vary",
}

// byLen indexes the Known headers by name length for Lookup.
var byLen [32][]Known

func init() {
	for k := Known(1); k < numKnown; k++ {
		n := len(knownNames[k])
		byLen[n] = append(byLen[n], k)
	}
}

// knownLower holds each Known header's lower-case spelling, as HTTP/2 and
// HTTP/3 send field names.
var knownLower = func() (t [numKnown]string) {
	for k, n := range knownNames {
		b := []byte(n)
		for i, c := range b {
			b[i] = lower(c)
		}
		t[k] = string(b)
	}
	return t
}()

// Lower returns the lower-case spelling of k ("" for Unknown).
func (k Known) Lower() string { return knownLower[k] }

// String returns the canonical spelling of k ("" for Unknown).
func (k Known) String() string { return knownNames[k] }

// Lookup classifies a field name case-insensitively without allocating.
func Lookup(name []byte) Known {
	if len(name) >= len(byLen) {
		return Unknown
	}
	if len(name) == 0 {
		return Unknown
	}
	// Most names differ from every candidate in their first byte; test it
	// before folding the rest.
	c := lower(name[0])
	for _, k := range byLen[len(name)] {
		if n := knownNames[k]; lower(n[0]) == c && EqualFold(name, n) {
			return k
		}
	}
	return Unknown
}

// getHeader is Request.Get and Response.Get.
func getHeader(hs []Header, name string) []byte {
	for i := range hs {
		if EqualFold(hs[i].Name, name) {
			return hs[i].Value
		}
	}
	return nil
}

// knownHeader is Request.Known and Response.Known: known indexes hs by kind
// (index+1, 0 for none).
func knownHeader(hs []Header, known *[numKnown]uint8, k Known) []byte {
	if i := known[k]; i != 0 {
		return hs[i-1].Value
	}
	if k != Unknown && len(hs) >= 255 {
		// Index past what known can hold: fall back to a scan.
		for i := range hs {
			if hs[i].Key == k {
				return hs[i].Value
			}
		}
	}
	return nil
}

// ConnectionSpecific reports a field name (any case) that HTTP/2 and
// HTTP/3 forbid in a message (RFC 9113 §8.2.2, RFC 9114 §4.2): Connection
// and the fields it would name. A server speaking those protocols drops
// them from a response.
func ConnectionSpecific(name []byte) bool {
	switch len(name) {
	case 7:
		return ascii.EqualFold(name, "upgrade")
	case 10:
		return ascii.EqualFold(name, "connection") || ascii.EqualFold(name, "keep-alive")
	case 16:
		return ascii.EqualFold(name, "proxy-connection")
	case 17:
		return ascii.EqualFold(name, "transfer-encoding")
	}
	return false
}
