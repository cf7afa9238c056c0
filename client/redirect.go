package client

import (
	"bytes"
	"context"
	"net/url"
	"strings"
)

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// doRedirects runs Do with redirect following (RFC 9110 §15.4). The
// caller's req is not modified: follow-up requests are built in a scratch
// Request. 303 (and 301/302 after POST) turn the request into a GET without
// body; 307 and 308 repeat method and body, except that a streamed body
// cannot be repeated, in which case the redirect is returned as is.
// Authorization and Cookie headers are dropped when the host changes.
// Following redirects allocates.
func (c *Client) doRedirects(ctx context.Context, req *Request, resp *Response) error {
	if err := c.do(ctx, req, resp, false); err != nil || !isRedirect(resp.StatusCode()) {
		return err
	}
	cur := req
	var next Request
	for i := 0; ; i++ {
		if i >= c.MaxRedirects {
			return ErrTooManyRedirects
		}
		loc := resp.Header("Location")
		if loc == nil {
			return nil
		}
		code := resp.StatusCode()
		keepBody := code == 307 || code == 308
		if keepBody && cur.bodyStream != nil {
			return nil
		}
		scheme := "http://"
		if cur.https {
			scheme = "https://"
		}
		base, err := url.Parse(scheme + string(cur.host) + string(cur.uri))
		if err != nil {
			return err
		}
		ref, err := url.Parse(string(loc))
		if err != nil {
			return err
		}
		target := base.ResolveReference(ref)
		var r Request
		if err := r.SetURL(target.String()); err != nil {
			return err
		}
		method := string(cur.Method())
		if !keepBody && (code == 303 || method == "POST") && method != "HEAD" {
			method = "GET"
		}
		r.SetMethod(method)
		sameHost := bytes.EqualFold(r.host, cur.host)
		copyHeaders(&r, cur, sameHost)
		if cur.hostHd != nil && sameHost {
			r.SetHost(string(cur.hostHd))
		}
		r.close = cur.close
		if keepBody {
			r.SetBody(cur.body)
		}
		next = r
		cur = &next
		if err := c.do(ctx, cur, resp, false); err != nil || !isRedirect(resp.StatusCode()) {
			return err
		}
	}
}

// copyHeaders copies src's header lines to dst, without credentials when
// the redirect leaves the host.
func copyHeaders(dst, src *Request, sameHost bool) {
	for rest := src.hdrs; len(rest) > 0; {
		eol := bytes.IndexByte(rest, '\n')
		line := rest[:eol+1]
		rest = rest[eol+1:]
		colon := bytes.IndexByte(line, ':')
		name := string(line[:colon])
		if !sameHost && (equalFold(name, "Authorization") || equalFold(name, "Cookie")) {
			continue
		}
		dst.AddHeader(name, string(line[colon+2:len(line)-2]))
	}
}

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }
