package client

import (
	"bytes"
	"compress/gzip"
	"io"
	"sync"

	"github.com/riptide-http/riptide/h1"
)

var gzipReaders sync.Pool // *gzip.Reader

// gunzip replaces a gzip-encoded body with its decompressed form and, as
// net/http's Transport does, drops the Content-Encoding and Content-Length
// fields, which described the encoded body (ContentLength becomes -1).
// Readers and buffers are reused, so decoding allocates little once warm.
func (r *Response) gunzip() error {
	ce := r.head.Known(h1.HeaderContentEncoding)
	if ce == nil || !h1.EqualFold(ce, "gzip") || len(r.body) == 0 {
		return nil
	}
	r.zsrc.Reset(r.body)
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(&r.zsrc)
	} else {
		err = zr.Reset(&r.zsrc)
	}
	if err != nil {
		return err
	}
	defer gzipReaders.Put(zr)
	out := r.zbuf[:0]
	for {
		if len(out) == cap(out) {
			out = grow(out, 4096)
		}
		n, err := zr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if max := r.maxBody; max > 0 && int64(len(out)) > max {
			return ErrBodyTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	r.zbuf, r.body = r.body[:0], out
	r.head.DelKnown(h1.HeaderContentEncoding)
	r.head.DelKnown(h1.HeaderContentLength)
	r.head.ContentLength = -1
	return nil
}

// byteReader is a bytes.Reader kept inside Response so that gunzip does not
// allocate one per call.
type byteReader = bytes.Reader
