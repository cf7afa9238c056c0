package eventstore

import (
	"compress/gzip"
	"io"
	"strings"
	"sync"
)

// GzipMinSize is the smallest response body worth compressing: large reads
// are gzipped, small replies are not.
const GzipMinSize = 4 << 10

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return zw
}}

// Gzip writes body to w gzip-compressed with a pooled compressor.
func Gzip(w io.Writer, body []byte) error {
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(w)
	if _, err := zw.Write(body); err != nil {
		return err
	}
	return zw.Close()
}

// AcceptsGzip reports whether an Accept-Encoding header value allows gzip.
// It ignores q-values other than an explicit "gzip;q=0".
func AcceptsGzip(acceptEncoding string) bool {
	for _, part := range strings.Split(acceptEncoding, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(params, " ", "") != "q=0"
		}
	}
	return false
}
