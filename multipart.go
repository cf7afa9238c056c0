package riptide

import (
	"mime"
	"mime/multipart"
	"net/http"
)

// MultipartReader returns a reader of the request body's parts, for a
// multipart/form-data (or multipart/mixed) request, as
// http.Request.MultipartReader: the parts stream from the connection as
// they are read, nothing is buffered whole, so an upload of any size
// costs the reader's buffer and what the handler keeps. It fails with
// http.ErrNotMultipart for another Content-Type and
// http.ErrMissingBoundary without a boundary.
//
// The limits are the body's: Server.MaxRequestBodySize, lowered for the
// request with SetBodyLimit (or middleware.BodyLimit); past them a part's
// Read or NextPart fails with ErrBodyTooLarge and the server answers 413
// if the handler answers nothing. mime/multipart bounds each part's
// header. Like Body, the reader is valid until the handler returns.
func (x *Ctx) MultipartReader() (*multipart.Reader, error) {
	ct := x.req.Get("Content-Type")
	if len(ct) == 0 {
		return nil, http.ErrNotMultipart
	}
	d, params, err := mime.ParseMediaType(string(ct))
	if err != nil || (d != "multipart/form-data" && d != "multipart/mixed") {
		return nil, http.ErrNotMultipart
	}
	boundary, ok := params["boundary"]
	if !ok {
		return nil, http.ErrMissingBoundary
	}
	return multipart.NewReader(x.Body(), boundary), nil
}
