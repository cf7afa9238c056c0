package middleware

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"strconv"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
)

// maxCredentials bounds the decoded "user:password" of Basic auth.
const maxCredentials = 256

// BasicAuth lets a request through when its Authorization header carries
// HTTP Basic credentials (RFC 7617) that valid accepts, and answers 401
// with a Basic challenge for realm otherwise. valid gets slices that are
// only valid during the call. Users is a ready-made valid. The handler
// reads the user that logged in with BasicAuthUser.
func BasicAuth(realm string, valid func(user, password []byte) bool) func(riptide.Handler) riptide.Handler {
	challenge := "Basic realm=" + strconv.Quote(realm) + `, charset="UTF-8"`
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			var buf [maxCredentials]byte
			if user, pass, ok := basicCredentials(c.Header("Authorization"), buf[:]); ok && valid(user, pass) {
				c.SetLocal(basicAuthKey{}, true)
				next.ServeCtx(c)
				return
			}
			c.SetHeader("WWW-Authenticate", challenge)
			c.Error(401, "Unauthorized")
		})
	}
}

// basicAuthKey is the Ctx local with which BasicAuth marks a request it
// let through.
type basicAuthKey struct{}

// BasicAuthUser returns the user name with which the request passed
// BasicAuth, or "" when no BasicAuth let it through (so a name taken from
// an unchecked Authorization header is never returned). It decodes the
// header again rather than have BasicAuth keep a copy, so a request pays
// for the string only when the handler asks.
func BasicAuthUser(c *riptide.Ctx) string {
	if c.Local(basicAuthKey{}) == nil {
		return ""
	}
	var buf [maxCredentials]byte
	user, _, _ := basicCredentials(c.Header("Authorization"), buf[:])
	return string(user)
}

// basicCredentials decodes a "Basic <base64>" header value into buf.
func basicCredentials(h, buf []byte) (user, pass []byte, ok bool) {
	const prefix = "basic "
	if len(h) < len(prefix) || !h1.EqualFold(h[:len(prefix)], prefix) {
		return nil, nil, false
	}
	enc := bytes.TrimLeft(h[len(prefix):], " ")
	if base64.StdEncoding.DecodedLen(len(enc)) > len(buf) {
		return nil, nil, false
	}
	n, err := base64.StdEncoding.Decode(buf, enc)
	if err != nil {
		return nil, nil, false
	}
	user, pass, ok = bytes.Cut(buf[:n], []byte(":"))
	return user, pass, ok
}

// Users returns a BasicAuth check against a fixed set of users and
// passwords, compared in constant time.
func Users(passwords map[string]string) func(user, password []byte) bool {
	return func(user, password []byte) bool {
		want, ok := passwords[string(user)]
		// Compare even for an unknown user, so that timing does not tell.
		eq := subtle.ConstantTimeCompare(password, []byte(want)) == 1
		return ok && eq
	}
}
