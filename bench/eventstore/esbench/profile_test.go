package esbench

import (
	"testing"

	"github.com/google/pprof/profile"
)

func sample(frames ...string) *profile.Sample {
	s := &profile.Sample{}
	for _, f := range frames { // leaf first, as in a profile
		s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: f}}}})
	}
	return s
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample *profile.Sample
		want   string
	}{
		{"JSON under the handler is the app's", sample("runtime.mallocgc", "encoding/json.Marshal",
			"github.com/riptide-http/riptide/bench/eventstore.(*App).Call", "net/http.(*conn).serve"), "app"},
		{"a write from the handler is the HTTP layer's", sample("internal/runtime/syscall/linux.Syscall6", "syscall.Write",
			"net.(*conn).Write", "bufio.(*Writer).Flush", "net/http.(*response).Write",
			"github.com/riptide-http/riptide/bench/eventstore.writeJSON"), "http"},
		{"riptide's engine is the HTTP layer", sample("runtime.memmove", "github.com/riptide-http/riptide.(*conn).serve"), "http"},
		{"fasthttp is the HTTP layer", sample("sync.(*Pool).Get", "github.com/valyala/fasthttp.(*Server).serveConn"), "http"},
		{"SQLite is the app's", sample("modernc.org/libc.Xmemcpy", "modernc.org/sqlite.(*conn).step", "database/sql.(*DB).QueryContext"), "app"},
		{"SQLite's file I/O is the app's", sample("internal/runtime/syscall/linux.Syscall6", "syscall.Syscall6",
			"golang.org/x/sys/unix.Pread", "modernc.org/libc.Xpread", "modernc.org/sqlite/lib._unixRead"), "app"},
		{"a header set by the app is handler API", sample("runtime.mallocgc", "net/textproto.MIMEHeader.Set", "net/http.Header.Set",
			"github.com/riptide-http/riptide/bench/eventstore.writeJSON"), "api"},
		{"ServeMux routing under the app's middleware is handler API", sample("net/http.(*ServeMux).findHandler",
			"net/http.(*ServeMux).ServeHTTP", "github.com/riptide-http/riptide/bench/eventstore.recoverPanics.func1"), "api"},
		{"the server's body read under MaxBytesReader is the HTTP layer", sample("syscall.Read",
			"github.com/riptide-http/riptide.(*compatBody).Read", "net/http.(*maxBytesReader).Read", "io.ReadAll",
			"github.com/riptide-http/riptide/bench/eventstore.(*App).serveRPC"), "http"},
		{"a header set by the server itself is the HTTP layer", sample("runtime.mallocgc", "net/http.Header.Set",
			"github.com/riptide-http/riptide.(*compatWriter).finish"), "http"},
		{"GC workers are the runtime's", sample("runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"), "runtime"},
	} {
		if got := classify(tc.sample); got != tc.want {
			t.Errorf("%s: classify = %s, want %s", tc.name, got, tc.want)
		}
	}
}
