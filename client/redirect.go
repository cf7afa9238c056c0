package client

import (
	"bytes"
	"context"
	"net/http"
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
// Credentials and cookies (see sensitiveHeader) follow the request only
// to the initial host and its subdomains, with net/http's rule: once
// dropped they stay dropped. Following redirects allocates.
func (c *Client) doRedirects(ctx context.Context, req *Request, resp *Response) error {
	if err := c.do(ctx, req, resp, false); err != nil || !isRedirect(resp.StatusCode()) {
		return err
	}
	cur := req
	strip := false
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
		base, err := cur.url()
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
		if !strip && !bytes.Equal(r.host, req.host) {
			strip = !isDomainOrSubdomain(hostname(r.host), hostname(req.host))
		}
		copyHeaders(&r, cur, strip)
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

// url returns the request's URL (allocating).
func (r *Request) url() (*url.URL, error) {
	scheme := "http://"
	if r.https {
		scheme = "https://"
	}
	return url.Parse(scheme + string(r.host) + string(r.uri))
}

// copyHeaders copies src's header lines to dst, without the sensitive ones
// when strip is set.
func copyHeaders(dst, src *Request, strip bool) {
	for rest := src.hdrs; len(rest) > 0; {
		eol := bytes.IndexByte(rest, '\n')
		line := rest[:eol+1]
		rest = rest[eol+1:]
		colon := bytes.IndexByte(line, ':')
		name := string(line[:colon])
		if strip && sensitiveHeader(name) {
			continue
		}
		dst.AddHeader(name, string(line[colon+2:len(line)-2]))
	}
}

// sensitiveHeader reports the fields net/http's Client drops on a redirect
// to another domain: credentials for the origin or a proxy, and cookies.
func sensitiveHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization", "Proxy-Authenticate":
		return true
	}
	return false
}

// hostname returns the host of an authority, lower case, without port or
// IPv6 brackets.
func hostname(authority []byte) string {
	host, _ := splitAuthority(string(authority))
	return strings.ToLower(host)
}

// isDomainOrSubdomain reports whether sub is parent or a subdomain of it.
// An IP literal (a ':' or zone '%' in sub) matches itself only.
func isDomainOrSubdomain(sub, parent string) bool {
	if sub == parent {
		return true
	}
	if strings.ContainsAny(sub, ":%") {
		return false
	}
	return len(sub) > len(parent) && strings.HasSuffix(sub, parent) && sub[len(sub)-len(parent)-1] == '.'
}
