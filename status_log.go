package riptide

import (
	"runtime"
	"strconv"
)

// superfluousStatus logs, once per response, that the handler set status
// code through api after the head was fixed with status fixed, so the code
// is ignored: net/http's "http: superfluous response.WriteHeader call"
// line, on the Server's Logger, with the handler's line: the frame
// runtime.Caller(skip) finds from here.
func (x *Ctx) superfluousStatus(api string, fixed, code, skip int) {
	r := &x.resp
	if r.statusLogged {
		return
	}
	r.statusLogged = true
	from := "unknown"
	if pc, file, line, ok := runtime.Caller(skip); ok {
		from = file + ":" + strconv.Itoa(line)
		if f := runtime.FuncForPC(pc); f != nil {
			from = f.Name() + " (" + from + ")"
		}
	}
	x.conn.srv.logger().Error("riptide: superfluous status: the response head was already written; the status is ignored",
		"api", api, "status", fixed, "ignored", code, "from", from)
}
