package middleware

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
)

// CORSOptions configures CORS.
type CORSOptions struct {
	// AllowedOrigins lists the origins allowed, exactly as browsers send
	// them ("https://example.com"); "*" allows any origin, answered with
	// Access-Control-Allow-Origin: *, and cannot be combined with
	// AllowCredentials. The opaque origin "null" (sandboxed frames, file:
	// pages, some redirects) is reflected only when listed as "null".
	AllowedOrigins []string
	// AllowedMethods answers preflights (default GET, HEAD, POST).
	AllowedMethods []string
	// AllowedHeaders lists the request headers a preflight may ask for
	// (case-insensitive); "*" allows any.
	AllowedHeaders []string
	// ExposedHeaders are the response headers scripts may read.
	ExposedHeaders []string
	// AllowCredentials lets requests carry cookies and auth; the origin
	// is then echoed, never "*". It requires explicit AllowedOrigins:
	// CORS panics when it is set with "*".
	AllowCredentials bool
	// MaxAge is how long, in seconds, a preflight may be cached (0: not
	// sent).
	MaxAge int
}

// CORS answers cross-origin requests by the Fetch standard's CORS
// protocol. A request from an allowed origin gets
// Access-Control-Allow-Origin (and Vary: Origin when it is not "*"); a
// preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered with 204 and the allowed methods and headers, without calling
// the handler, or passed to it unanswered when the origin, method or
// headers are not allowed. Requests without Origin pass through untouched.
//
// CORS panics when AllowedOrigins contains "*" and AllowCredentials is
// set: the Fetch standard refuses Access-Control-Allow-Origin: * with
// credentials, and echoing every Origin instead would let any site, or a
// sandboxed "null" document, read the user's credentialed responses.
func CORS(o CORSOptions) func(riptide.Handler) riptide.Handler {
	p := newCORSPolicy(o)
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			origin := c.Header("Origin")
			if origin == nil || !p.originAllowed(origin) {
				next.ServeCtx(c)
				return
			}
			reqMethod := c.Header("Access-Control-Request-Method")
			if string(c.Method()) == "OPTIONS" && reqMethod != nil {
				p.preflight(c, origin, reqMethod, next)
				return
			}
			p.allowOrigin(c, origin)
			if p.exposed != "" {
				c.SetHeader("Access-Control-Expose-Headers", p.exposed)
			}
			next.ServeCtx(c)
		})
	}
}

// corsPolicy is CORSOptions with the header values built once.
type corsPolicy struct {
	anyOrigin   bool
	origins     []string
	methods     []string
	methodsList string
	anyHeader   bool
	headers     []string // lower case
	exposed     string
	credentials bool
	maxAge      string
}

// errCORSWildcardCredentials is CORS's panic for "*" with credentials.
const errCORSWildcardCredentials = `middleware: CORS with AllowedOrigins "*" and AllowCredentials: ` +
	`the Fetch standard forbids credentialed requests from any origin; list the allowed origins instead`

func newCORSPolicy(o CORSOptions) *corsPolicy {
	if o.AllowCredentials && slices.Contains(o.AllowedOrigins, "*") {
		panic(errCORSWildcardCredentials)
	}
	p := &corsPolicy{
		anyOrigin:   slices.Contains(o.AllowedOrigins, "*"),
		origins:     o.AllowedOrigins,
		methods:     o.AllowedMethods,
		anyHeader:   slices.Contains(o.AllowedHeaders, "*"),
		exposed:     strings.Join(o.ExposedHeaders, ", "),
		credentials: o.AllowCredentials,
	}
	if len(p.methods) == 0 {
		p.methods = []string{"GET", "HEAD", "POST"}
	}
	p.methodsList = strings.Join(p.methods, ", ")
	for _, h := range o.AllowedHeaders {
		p.headers = append(p.headers, strings.ToLower(h))
	}
	if o.MaxAge > 0 {
		p.maxAge = strconv.Itoa(o.MaxAge)
	}
	return p
}

func (p *corsPolicy) originAllowed(origin []byte) bool {
	if p.anyOrigin {
		return true
	}
	for _, o := range p.origins {
		if o == string(origin) {
			return true
		}
	}
	return false
}

func (p *corsPolicy) allowOrigin(c *riptide.Ctx, origin []byte) {
	if p.anyOrigin && !p.credentials {
		c.SetHeader("Access-Control-Allow-Origin", "*")
	} else {
		c.SetHeaderBytes("Access-Control-Allow-Origin", origin)
		c.AddHeader("Vary", "Origin")
	}
	if p.credentials {
		c.SetHeader("Access-Control-Allow-Credentials", "true")
	}
}

func (p *corsPolicy) preflight(c *riptide.Ctx, origin, method []byte, next riptide.Handler) {
	reqHeaders := c.Header("Access-Control-Request-Headers")
	if !p.methodAllowed(method) || !p.headersAllowed(reqHeaders) {
		next.ServeCtx(c) // not a preflight this policy grants
		return
	}
	p.allowOrigin(c, origin)
	c.AddHeader("Vary", "Access-Control-Request-Method")
	c.AddHeader("Vary", "Access-Control-Request-Headers")
	c.SetHeader("Access-Control-Allow-Methods", p.methodsList)
	if len(reqHeaders) > 0 {
		c.SetHeaderBytes("Access-Control-Allow-Headers", reqHeaders)
	}
	if p.maxAge != "" {
		c.SetHeader("Access-Control-Max-Age", p.maxAge)
	}
	c.SetStatus(204)
}

func (p *corsPolicy) methodAllowed(m []byte) bool {
	for _, a := range p.methods {
		if a == string(m) {
			return true
		}
	}
	return false
}

// headersAllowed checks each name of a comma-separated
// Access-Control-Request-Headers value.
func (p *corsPolicy) headersAllowed(list []byte) bool {
	if p.anyHeader {
		return true
	}
	for len(list) > 0 {
		var name []byte
		if i := bytes.IndexByte(list, ','); i >= 0 {
			name, list = list[:i], list[i+1:]
		} else {
			name, list = list, nil
		}
		name = bytes.Trim(name, " \t")
		if len(name) > 0 && !p.headerAllowed(name) {
			return false
		}
	}
	return true
}

func (p *corsPolicy) headerAllowed(name []byte) bool {
	for _, h := range p.headers {
		if h1.EqualFold(name, h) {
			return true
		}
	}
	return false
}
