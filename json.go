package riptide

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riptide-http/riptide/internal/ascii"
)

// JSON helpers for the native door: BindJSON decodes a request body, JSON
// encodes a response. Beyond encoding/json's own work they allocate
// nothing per request: the body is read into the Ctx's buffer and the
// encoder is kept with the Ctx.

// ErrUnsupportedMediaType is BindJSON's error for a request whose
// Content-Type is not JSON.
var ErrUnsupportedMediaType = errors.New("riptide: request body is not JSON (Content-Type)")

// BindJSON decodes the request body, which must be JSON, into v (as
// json.Unmarshal does) and reports the error. On an error it has already
// answered the request with Ctx.Error (so Server.ErrorHandler shapes it):
// 415 when the Content-Type is not application/json or a +json type
// (ErrUnsupportedMediaType), 413 when the body is larger than the limit
// (ErrBodyTooLarge: Server.MaxRequestBodySize, else
// DefaultMaxReadBodySize; lower it with SetBodyLimit or
// middleware.BodyLimit), 400 when it is not valid JSON for v (the
// encoding/json error; unknown fields are ignored, as json.Unmarshal
// does). The handler then just returns:
//
//	var in struct{ Name string }
//	if c.BindJSON(&in) != nil {
//		return
//	}
//
// The whole body is read into a buffer owned by the Ctx (see ReadBody), so
// v must not keep slices of it past the handler ([]byte fields are copied
// by encoding/json; json.RawMessage is not).
func (x *Ctx) BindJSON(v any) error {
	if !isJSON(x.req.Get("Content-Type")) {
		x.Error(415, "Unsupported Media Type: want application/json")
		return ErrUnsupportedMediaType
	}
	body, err := x.ReadBody()
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		x.Error(413, "Request Entity Too Large")
		return err
	case err != nil:
		x.Error(400, "Bad Request: reading the body: "+err.Error())
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		x.Error(400, "Bad Request: "+err.Error())
		return err
	}
	return nil
}

// isJSON reports whether a Content-Type value is application/json or
// application/*+json, with or without parameters.
func isJSON(ct []byte) bool {
	for i, c := range ct {
		if c == ';' || c == ' ' || c == '\t' {
			ct = ct[:i]
			break
		}
	}
	const app = "application/"
	if len(ct) < len(app) || !ascii.EqualFold(ct[:len(app)], app) {
		return false
	}
	sub := ct[len(app):]
	return ascii.EqualFold(sub, "json") ||
		len(sub) > 5 && ascii.EqualFold(sub[len(sub)-5:], "+json")
}

// JSON answers with status and v encoded as JSON (json.Encoder: HTML
// characters escaped, a newline after the value), Content-Type
// application/json. If v cannot be encoded nothing of it is written: the
// response becomes a 500 through Ctx.Error and the encoding error is
// returned. Like SetStatus, call it before writing anything else. Pass a
// pointer (or a map, slice) so that v itself does not escape to the heap.
func (x *Ctx) JSON(status int, v any) error {
	if x.jsonEnc == nil {
		x.jsonEnc = json.NewEncoder(x) // Write: through the body filter, as the handler's
	}
	x.SetContentType("application/json")
	x.SetStatus(status)
	if err := x.jsonEnc.Encode(v); err != nil {
		// Nothing was written (Encode writes only a whole value), so the
		// status and header fields can still change.
		x.Error(500, fmt.Sprintf("Internal Server Error: encoding the response: %v", err))
		return err
	}
	return nil
}
