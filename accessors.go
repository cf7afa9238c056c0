package riptide

import "bytes"

// String accessors: copies of request values for code that keeps them or
// hands them to strings and strconv. Each allocates the copy (nothing when
// the value is absent or empty); the []byte accessors they wrap do not.

// PathValueString returns a copy of PathValue(name) as a string.
func (x *Ctx) PathValueString(name string) string { return string(x.PathValue(name)) }

// QueryArgString returns a copy of QueryArg(name) (decoded) as a string.
func (x *Ctx) QueryArgString(name string) string { return string(x.QueryArg(name)) }

// HeaderString returns a copy of Header(name) as a string.
func (x *Ctx) HeaderString(name string) string { return string(x.Header(name)) }

// CookieString returns a copy of Cookie(name) as a string.
func (x *Ctx) CookieString(name string) string { return string(x.Cookie(name)) }

// DecodedPath returns the request path with its percent-escapes decoded,
// as net/http's URL.Path (and fasthttp's Path) are: "/a%20b" is "/a b",
// and "%2F" becomes "/", so that path is not for routing (routers match
// the escaped Path). Without a '%' in the path it returns Path itself, no
// copy; otherwise the decoded copy lives in a buffer owned by the Ctx,
// valid until the handler returns. Malformed escapes are kept as sent.
func (x *Ctx) DecodedPath() []byte {
	p := x.req.Path
	if bytes.IndexByte(p, '%') < 0 {
		return p
	}
	return x.decode(p, false)
}
