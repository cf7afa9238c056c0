// Package compress compresses riptide native responses with zstd, brotli
// or gzip, chosen by the request's Accept-Encoding. It is its own Go
// module (github.com/riptide-http/riptide/compress), so that its encoders,
// github.com/klauspost/compress and github.com/andybalholm/brotli, are not
// dependencies of the core module.
//
//	h := compress.New(compress.Config{})(app) // app is a riptide.Handler
//	srv := &riptide.Server{Handler: h}
//
// New returns a func(riptide.Handler) riptide.Handler, the shape of
// riptide's middleware (middleware.Chain, router groups). It sets itself
// as the Ctx's body filter ([riptide.Ctx.SetBodyFilter]) for the duration
// of the handler: the body is held until it reaches Config.MinSize, then
// the response head decides (status, Content-Type, Content-Encoding,
// Content-Range, Cache-Control: no-transform) whether it is compressed.
// A handler that flushes (server-sent events) gets each flushed piece to
// the client at once: Flush flushes the encoder, then the connection.
//
// Encoders are pooled per New call, so a compressed response allocates
// nothing in steady state; levels are set in Config. A client that stops
// reading cannot hold an encoder: each write of compressed output is
// bounded by Config.WriteTimeout (DefaultWriteTimeout, 30 s), after which
// the encoder is released and the response fails; and at most
// Config.MaxEncoders responses (DefaultMaxEncoders, 32) hold an encoder at
// once, the others going out uncompressed, which bounds the memory stalled
// clients can pin together.
//
// Only native handlers are compressed: a net/http handler served through
// riptide.FromHTTP writes its body past the filter and is passed through
// as it is; wrap such handlers in an http.Handler compressor (for example
// github.com/klauspost/compress/gzhttp) instead.
package compress
