package riptide

// Error answers the request with an error: through Server.ErrorHandler
// when one is set, else as http.Error does, with code, Content-Type
// text/plain; charset=utf-8, X-Content-Type-Options: nosniff and msg
// followed by a newline. Header fields set before (WWW-Authenticate, Allow,
// CORS) stay. Like SetStatus, it must come before the body is written to.
// The native middleware, the router and BindJSON answer their errors with
// it, so that one ErrorHandler shapes them all. An Error called from
// within the ErrorHandler (its own JSON failing, say) answers in plain
// text rather than recurse.
func (x *Ctx) Error(code int, msg string) {
	if h := x.conn.srv.ErrorHandler; h != nil && !x.resp.inError {
		x.resp.inError = true
		h(x, code, msg)
		x.resp.inError = false
		return
	}
	x.SetContentType("text/plain; charset=utf-8")
	x.SetHeader("X-Content-Type-Options", "nosniff")
	x.SetStatus(code)
	x.WriteString(msg)
	x.WriteString("\n")
}
