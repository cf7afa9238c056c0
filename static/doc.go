// Package static serves the files under a directory to riptide's native
// door, sending their bytes with sendfile(2) (riptide.Ctx.SendFile):
//
//	h, err := static.New("./public", static.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	srv := &riptide.Server{Handler: h}
//	log.Fatal(srv.ListenAndServe(":8080"))
//
// Example (example_test.go) mounts it under a prefix of a router and runs.
// It answers GET and HEAD with Content-Type (by extension, else sniffed),
// Last-Modified and a weak ETag (from size and modification time);
// conditional requests (If-None-Match and If-Modified-Since give 304,
// If-Match and If-Unmodified-Since 412); Range requests, one range (206)
// or several (multipart/byteranges), guarded by If-Range; index.html for
// a directory; pre-compressed name.br and name.gz siblings when the client
// accepts them (Options.Precompressed); Cache-Control by path prefix and
// extension (Options.CacheControl). Directory listings are off unless
// Options.Browse. Error answers (404, 405, 416) are made with
// riptide.Ctx.Error, so that Server.ErrorHandler shapes them.
//
// Security: the request path is resolved by a strict parser before any
// file system call, and a path it cannot resolve to exactly one name
// inside the root is 404: "." and ".." segments, empty segments ("//"),
// encoded slashes and backslashes ("%2F", "%5C"), backslashes, NUL and
// other control bytes, malformed escapes, names starting with '.' (unless
// Options.DotFiles). Files are then opened through os.Root, so that a
// symbolic link leading out of the root is refused (unless
// Options.FollowSymlinks), and only regular files are served (a FIFO or a
// device in the root is 404, and opening one does not block). See
// docs/static.md.
//
// Open files and their headers are cached (Options.MaxFiles) and a path
// is stat'ed again at most every Options.Recheck, so a cached file is
// served with no allocation and no system call other than the writes.
package static
