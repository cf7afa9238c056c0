package compress

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
)

// DefaultMinSize is Config.MinSize's default: bodies shorter than this
// are sent as they are (a few hundred bytes barely shrink, and the
// encoder's framing can make them grow).
const DefaultMinSize = 1024

// Default compression levels (Config.GzipLevel, ZstdLevel, BrotliLevel),
// chosen for responses compressed on the fly: fast with a good ratio.
const (
	DefaultGzipLevel   = gzip.DefaultCompression
	DefaultZstdLevel   = zstd.SpeedDefault
	DefaultBrotliLevel = 4
)

// DefaultWriteTimeout is Config.WriteTimeout's default: a compressed
// response's write that makes no progress for this long fails, and the
// encoder is given back. It is nginx's send_timeout (60s) halved: long
// enough for a slow mobile link, short enough that a client that stops
// reading does not pin an encoder's state (up to ~3.6 MiB for brotli, ~2.8
// MiB for zstd) for long.
const DefaultWriteTimeout = 30 * time.Second

// DefaultMaxEncoders is Config.MaxEncoders's default: how many responses
// of one middleware may hold an encoder at once. An encoder's state is
// about 1 MiB for gzip, 2.8 MiB for zstd and 0.6 to 26 MiB for brotli
// (growing with the body; measured at the default levels, with
// incompressible bodies), so a client that stops reading pins that much
// until WriteTimeout; the budget bounds what all of them pin together.
const DefaultMaxEncoders = 32

// DefaultContentTypes are the media types compressed when
// Config.ContentTypes is nil: text, and the textual application and image
// types. An entry ending in "/*" matches a whole type; media types with a
// "+json" or "+xml" suffix (RFC 6838 §4.2.8) match as well.
var DefaultContentTypes = []string{
	"text/*",
	"application/json",
	"application/x-ndjson",
	"application/javascript",
	"application/x-javascript",
	"application/ecmascript",
	"application/xml",
	"application/wasm",
	"application/graphql-response+json",
	"image/svg+xml",
	"image/x-icon",
	"image/vnd.microsoft.icon",
	"font/ttf",
	"font/otf",
}

// Config configures the middleware; its zero value compresses with zstd,
// brotli or gzip (in that order of preference) at the default levels.
type Config struct {
	// Encodings are the encodings offered, in order of preference when
	// the client accepts several with the same q-value. Nil means Zstd,
	// Brotli, Gzip.
	Encodings []Encoding
	// MinSize is the smallest body compressed (DefaultMinSize when 0; a
	// negative value compresses every eligible body). A body whose end
	// is not known yet — the handler flushed — is compressed whatever
	// its size so far.
	MinSize int
	// ContentTypes are the media types compressed (DefaultContentTypes
	// when nil), matched case-insensitively on the Content-Type without
	// parameters; "type/*" matches a whole type. A response without a
	// Content-Type is not compressed.
	ContentTypes []string
	// GzipLevel is the gzip level, -1 (default) or 1 (fastest) to 9
	// (best); 0 means DefaultGzipLevel.
	GzipLevel int
	// ZstdLevel is the zstd level; 0 means DefaultZstdLevel.
	ZstdLevel zstd.EncoderLevel
	// BrotliLevel is the brotli level, 0 to 11; 0 means
	// DefaultBrotliLevel.
	BrotliLevel int
	// WriteTimeout bounds each write of a compressed response to the
	// network, so that a client that stops reading cannot hold the
	// encoder: the write fails (os.ErrDeadlineExceeded), the encoder goes
	// back to its pool at once, and every later write of the response
	// fails with the same error. Zero means DefaultWriteTimeout; negative
	// means the middleware sets no deadline. It is set with
	// Ctx.SetWriteDeadline, which replaces Server.WriteTimeout for the
	// rest of the response: set it no longer than the server's. It is
	// re-armed lazily, when a quarter of it has passed since the last
	// arming, so a write may fail after three quarters of it. Responses
	// that are not compressed keep the server's timeouts.
	WriteTimeout time.Duration
	// MaxEncoders bounds how many responses hold an encoder at once,
	// across everything the middleware serves (the requests of every
	// server it wraps a handler of): a response that would take one more
	// is sent uncompressed (identity), as if the client accepted no
	// encoding, so the memory stalled clients can pin (see
	// DefaultMaxEncoders) is bounded, not only the time (WriteTimeout). A
	// response holds its encoder from the moment it is chosen to be
	// compressed until it ends or a write fails. Zero means
	// DefaultMaxEncoders; negative means no limit.
	MaxEncoders int
}

// New returns the middleware: it compresses a native handler's response
// body with the encoding the request's Accept-Encoding prefers among those
// offered (see Negotiate), when the response is worth it and allowed:
//   - not for HEAD, nor for a status without a body or a partial one
//     (1xx, 204, 206, 304), nor with a Content-Range;
//   - not when the handler set Content-Encoding (already encoded, e.g. a
//     pre-compressed file) or Cache-Control: no-transform;
//   - only for the configured content types, and bodies of at least
//     MinSize bytes (or streamed with Flush).
//
// It adds Vary: Accept-Encoding to every response it passes (a cache must
// key them by that header, compressed or not), and to a compressed one
// sets Content-Encoding, removes Content-Length and Accept-Ranges (the
// length and ranges of the uncompressed body do not apply) and makes a
// strong ETag weak (W/"..."), since the bytes differ from the uncompressed
// representation's. A Flush
// flushes the encoder first, so each server-sent event reaches the client
// as soon as the handler flushes it.
//
// New panics if a level in cfg is out of range. Encoders are pooled per
// middleware: a compressed response allocates
// nothing in steady state (TestAllocs). The middleware works over HTTP/1.1
// and HTTP/2 alike; it compresses only bodies written through the native
// Ctx (a compat-door handler's body passes through untouched).
func New(cfg Config) func(riptide.Handler) riptide.Handler {
	m := newMiddleware(cfg)
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) { m.serve(c, next) })
	}
}

// middleware is a configured compressor, shared by the requests it serves.
type middleware struct {
	prefer  []Encoding
	minSize int
	timeout time.Duration // WriteTimeout, 0 for none
	types   []string
	levels  [numEncodings]int
	zlevel  zstd.EncoderLevel
	// writers pools *writer (the per-response state); encoders pools one
	// encoder kind each.
	writers  sync.Pool
	encoders [numEncodings]sync.Pool
	// maxEnc is MaxEncoders (0: no limit); held counts the encoders
	// responses hold now.
	maxEnc int64
	held   atomic.Int64
}

func newMiddleware(cfg Config) *middleware {
	m := &middleware{
		prefer:  cfg.Encodings,
		minSize: cfg.MinSize,
		types:   cfg.ContentTypes,
		zlevel:  cfg.ZstdLevel,
	}
	if m.prefer == nil {
		m.prefer = []Encoding{Zstd, Brotli, Gzip}
	}
	switch {
	case m.minSize == 0:
		m.minSize = DefaultMinSize
	case m.minSize < 0:
		m.minSize = 0
	}
	if m.types == nil {
		m.types = DefaultContentTypes
	}
	m.levels[Gzip] = cfg.GzipLevel
	if m.levels[Gzip] == 0 {
		m.levels[Gzip] = DefaultGzipLevel
	}
	m.levels[Brotli] = cfg.BrotliLevel
	if m.levels[Brotli] == 0 {
		m.levels[Brotli] = DefaultBrotliLevel
	}
	if m.zlevel == 0 {
		m.zlevel = DefaultZstdLevel
	}
	switch m.maxEnc = int64(cfg.MaxEncoders); {
	case m.maxEnc == 0:
		m.maxEnc = DefaultMaxEncoders
	case m.maxEnc < 0:
		m.maxEnc = 0
	}
	switch m.timeout = cfg.WriteTimeout; {
	case m.timeout == 0:
		m.timeout = DefaultWriteTimeout
	case m.timeout < 0:
		m.timeout = 0
	}
	// Fail at configuration, not on the first request.
	if _, err := gzip.NewWriterLevel(io.Discard, m.levels[Gzip]); err != nil {
		panic("compress: " + err.Error())
	}
	if m.levels[Brotli] < brotli.BestSpeed || m.levels[Brotli] > brotli.BestCompression {
		panic("compress: brotli level out of range")
	}
	if m.zlevel < zstd.SpeedFastest || m.zlevel > zstd.SpeedBestCompression {
		panic("compress: zstd level out of range")
	}
	m.writers.New = func() any { w := &writer{m: m}; w.down.w = w; return w }
	return m
}

// encoder is what the three libraries' stream writers have in common.
type encoder interface {
	io.WriteCloser
	Flush() error
	Reset(io.Writer)
}

// takeSlot takes one of the MaxEncoders slots, or reports that none is
// left; a taken slot goes back with putSlot.
func (m *middleware) takeSlot() bool {
	if m.maxEnc == 0 {
		return true
	}
	if m.held.Add(1) > m.maxEnc {
		m.held.Add(-1)
		return false
	}
	return true
}

func (m *middleware) putSlot() {
	if m.maxEnc != 0 {
		m.held.Add(-1)
	}
}

// getEncoder returns a pooled encoder of kind e, reset to write to dst.
func (m *middleware) getEncoder(e Encoding, dst io.Writer) encoder {
	if v := m.encoders[e].Get(); v != nil {
		enc := v.(encoder)
		enc.Reset(dst)
		return enc
	}
	switch e {
	case Gzip:
		enc, _ := gzip.NewWriterLevel(dst, m.levels[Gzip]) // level checked in New
		return enc
	case Zstd:
		// One goroutine-free encoder per response: concurrency 1 keeps it
		// synchronous, and a small window bounds pooled memory.
		enc, err := zstd.NewWriter(dst, zstd.WithEncoderLevel(m.zlevel),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
			zstd.WithWindowSize(1<<20), zstd.WithZeroFrames(true))
		if err != nil {
			panic("compress: " + err.Error())
		}
		return enc
	}
	return brotli.NewWriterLevel(dst, m.levels[Brotli])
}

func (m *middleware) serve(c *riptide.Ctx, next riptide.Handler) {
	c.AddHeader("Vary", "Accept-Encoding")
	if isHEAD(c.Method()) {
		next.ServeCtx(c)
		return
	}
	enc := Negotiate(c.Header("Accept-Encoding"), m.prefer)
	if enc == Identity {
		next.ServeCtx(c)
		return
	}
	w := m.writers.Get().(*writer)
	w.x, w.prev, w.enc = c, c.BodyFilter(), enc
	c.SetBodyFilter(w)
	done := false
	defer func() {
		if !done {
			// The handler panicked: whoever recovers (the server resets
			// the response) writes past this half-used writer, which is
			// left to the garbage collector, encoder and all; its slot
			// is given back.
			c.SetBodyFilter(w.prev)
			if w.cur != nil {
				m.putSlot()
			}
		}
	}()
	next.ServeCtx(c)
	w.finish()
	c.SetBodyFilter(w.prev)
	done = true
	w.x, w.prev, w.buf, w.state, w.err, w.armed = nil, nil, w.buf[:0], undecided, nil, time.Time{}
	m.writers.Put(w)
}

func isHEAD(m []byte) bool { return string(m) == "HEAD" }

// The states of a writer.
const (
	undecided   = iota // buffering up to MinSize bytes
	passing            // not compressed: bytes go straight on
	compressing        // through the encoder
	failed             // a compressed write failed: the encoder is released
)

// writer is the BodyFilter of one response.
type writer struct {
	m     *middleware
	x     *riptide.Ctx
	prev  riptide.BodyFilter // the filter it replaced, written to
	enc   Encoding           // the encoding negotiated
	state int
	buf   []byte // body held while undecided
	etag  []byte // scratch for weakenETag
	cur   encoder
	down  downstream
	err   error     // the first error writing compressed output
	armed time.Time // when the write deadline was last set
}

// downstream is the encoder's io.Writer (and the passed-through body's):
// the filter below, or the Ctx. For compressed output it arms the write
// deadline (Config.WriteTimeout) and remembers the first error, which ends
// the compressed response.
type downstream struct{ w *writer }

func (d *downstream) Write(p []byte) (int, error) {
	w := d.w
	if w.state != compressing {
		return d.write(p)
	}
	if w.err != nil {
		return 0, w.err
	}
	if t := w.m.timeout; t > 0 {
		if now := time.Now(); now.Sub(w.armed) >= t/4 {
			w.x.SetWriteDeadline(now.Add(t))
			w.armed = now
		}
	}
	n, err := d.write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

func (d *downstream) write(p []byte) (int, error) {
	if d.w.prev != nil {
		return d.w.prev.Write(p)
	}
	return d.w.x.WriteUnfiltered(p)
}

// encoded checks the error of a call into the encoder: once compressed
// output could not be written, the encoder is released (a client that
// stopped reading must not hold its state while the handler runs on) and
// the response fails.
func (w *writer) encoded(err error) error {
	if err == nil && w.err == nil {
		return nil
	}
	if w.err == nil {
		w.err = err
	}
	w.release()
	w.state = failed
	return w.err
}

// Write implements riptide.BodyFilter.
func (w *writer) Write(p []byte) (int, error) {
	switch w.state {
	case compressing:
		n, err := w.cur.Write(p)
		return n, w.encoded(err)
	case failed:
		return 0, w.err
	case passing:
		return w.down.Write(p)
	}
	if len(w.buf)+len(p) < w.m.minSize {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.decide(true)
	if err := w.drain(); err != nil {
		return 0, err
	}
	return w.Write(p)
}

// Flush implements riptide.BodyFilter: the encoder's pending output, then
// the connection.
func (w *writer) Flush() error {
	if w.state == undecided {
		w.decide(true)
		if err := w.drain(); err != nil {
			return err
		}
	}
	switch w.state {
	case compressing:
		if err := w.encoded(w.cur.Flush()); err != nil {
			return err
		}
	case failed:
		return w.err
	}
	if w.prev != nil {
		return w.prev.Flush()
	}
	return w.x.FlushUnfiltered()
}

// finish ends the body once the handler has returned.
func (w *writer) finish() {
	if w.x.Hijacked() {
		w.release()
		return
	}
	if w.state == undecided {
		w.decide(len(w.buf) > 0 && len(w.buf) >= w.m.minSize)
		w.drain()
	}
	if w.state == compressing {
		w.encoded(w.cur.Close())
	}
	w.release()
}

// release returns the encoder to its pool, and its slot.
func (w *writer) release() {
	if w.cur != nil {
		w.m.encoders[w.enc].Put(w.cur)
		w.cur = nil
		w.m.putSlot()
	}
}

// drain writes the buffered body on, through the encoder if compressing.
func (w *writer) drain() error {
	if len(w.buf) == 0 {
		return nil
	}
	b := w.buf
	w.buf = w.buf[:0]
	_, err := w.Write(b)
	return err
}

// decide chooses, from the response head set so far, whether to compress;
// big is whether the body is long enough.
func (w *writer) decide(big bool) {
	w.state = passing
	x := w.x
	if !big || x.Committed() {
		return
	}
	ok, vary := w.eligible()
	if !ok || !w.m.takeSlot() {
		return // no slot: sent as it is (MaxEncoders)
	}
	w.state = compressing
	x.DelHeader("Content-Length")
	x.DelHeader("Accept-Ranges")
	x.SetHeader("Content-Encoding", w.enc.String())
	if !vary { // the handler replaced the Vary set before it ran
		x.AddHeader("Vary", "Accept-Encoding")
	}
	w.weakenETag()
	w.cur = w.m.getEncoder(w.enc, &w.down)
}

// weakenETag turns a strong ETag weak, as nginx does: a strong validator
// promises these exact bytes (RFC 9110 §8.8.1), which compression changes,
// while a weak one still matches If-None-Match (weak comparison).
func (w *writer) weakenETag() {
	var tag []byte
	for k, v := range w.x.ResponseHeaders {
		if h1.EqualFold(k, "etag") {
			tag = v
			break
		}
	}
	if len(tag) == 0 || bytes.HasPrefix(tag, []byte("W/")) {
		return
	}
	// tag points into the header lines SetHeaderBytes rewrites: copy it.
	w.etag = append(append(w.etag[:0], "W/"...), tag...)
	w.x.SetHeaderBytes("ETag", w.etag)
}

// eligible reports whether the response may be compressed, from its
// status, and Content-Type, Content-Encoding, Content-Range and
// Cache-Control; and whether a Vary field names Accept-Encoding.
func (w *writer) eligible() (ok, vary bool) {
	switch s := w.x.Status(); {
	case s < 200, s == 204, s == 206, s == 304:
		return false, false
	}
	typeOK := false
	for k, v := range w.x.ResponseHeaders {
		switch {
		case h1.EqualFold(k, "content-type"):
			typeOK = w.m.typeAllowed(v)
		case h1.EqualFold(k, "content-encoding"):
			if !h1.EqualFold(trim(v), "identity") {
				return false, false
			}
		case h1.EqualFold(k, "content-range"):
			return false, false
		case h1.EqualFold(k, "cache-control"):
			if containsFold(v, "no-transform") {
				return false, false
			}
		case h1.EqualFold(k, "vary"):
			vary = vary || containsFold(v, "accept-encoding") || bytes.Equal(trim(v), []byte("*"))
		}
	}
	return typeOK, vary
}

// typeAllowed reports whether a Content-Type value is among m.types.
func (m *middleware) typeAllowed(ct []byte) bool {
	mt, _ := cut(ct, ';')
	mt = trim(mt)
	slash := bytes.IndexByte(mt, '/')
	if slash <= 0 {
		return false
	}
	for _, t := range m.types {
		if len(t) == slash+2 && t[slash:] == "/*" && h1.EqualFold(mt[:slash], t[:slash]) {
			return true
		}
		if h1.EqualFold(mt, t) {
			return true
		}
	}
	// RFC 6838 §4.2.8 structured syntax suffixes.
	return hasSuffixFold(mt, "+json") || hasSuffixFold(mt, "+xml")
}

func hasSuffixFold(s []byte, suffix string) bool {
	return len(s) >= len(suffix) && h1.EqualFold(s[len(s)-len(suffix):], suffix)
}

func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if h1.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
