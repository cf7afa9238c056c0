package client

import (
	"bytes"
	"context"
	"net/http"

	"github.com/riptide-http/riptide/h1"
)

// doJar is do with Client.Jar: the jar's cookies for the request's URL
// join its Cookie field (one field, as RFC 6265 §5.4 asks) for this
// exchange only, and the response's Set-Cookie fields go to the jar.
func (c *Client) doJar(ctx context.Context, req *Request, resp *Response, stream bool) error {
	u, err := req.url()
	if err != nil {
		return err
	}
	if cookies := c.Jar.Cookies(u); len(cookies) > 0 {
		orig := req.hdrs
		req.hdrs = withCookies(make([]byte, 0, len(orig)+64), orig, cookies)
		defer func() { req.hdrs = orig }()
	}
	if err := c.exchange(ctx, req, resp, stream); err != nil {
		return err
	}
	var set []*http.Cookie
	for _, f := range resp.Headers() {
		if h1.EqualFold(f.Name, "Set-Cookie") {
			if ck, err := http.ParseSetCookie(string(f.Value)); err == nil {
				set = append(set, ck)
			}
		}
	}
	if len(set) > 0 {
		c.Jar.SetCookies(u, set)
	}
	return nil
}

// withCookies appends to dst the header lines hdrs with cookies added to
// their Cookie field, or in a new one at the end when there is none.
func withCookies(dst, hdrs []byte, cookies []*http.Cookie) []byte {
	appendCookies := func(dst []byte, sep bool) []byte {
		for _, ck := range cookies {
			if sep {
				dst = append(dst, "; "...)
			}
			sep = true
			dst = append(dst, (&http.Cookie{Name: ck.Name, Value: ck.Value, Quoted: ck.Quoted}).String()...)
		}
		return dst
	}
	added := false
	for rest := hdrs; len(rest) > 0; {
		eol := bytes.IndexByte(rest, '\n')
		line := rest[:eol+1]
		rest = rest[eol+1:]
		if !added && len(line) > 8 && h1.EqualFold(line[:7], "Cookie:") {
			dst = append(dst, line[:len(line)-2]...)
			dst = append(appendCookies(dst, true), "\r\n"...)
			added = true
			continue
		}
		dst = append(dst, line...)
	}
	if !added {
		dst = append(dst, "Cookie: "...)
		dst = append(appendCookies(dst, false), "\r\n"...)
	}
	return dst
}
