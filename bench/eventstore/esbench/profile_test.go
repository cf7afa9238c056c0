package esbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// allocsProfile is an allocs profile with one sample per stack (leaf
// first) and its alloc_space value.
func allocsProfile(stacks map[string]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
	}
	fns := map[string]*profile.Function{}
	for stack, v := range stacks {
		s := &profile.Sample{Value: []int64{1, v, 0, 0}}
		for _, name := range strings.Split(stack, ";") {
			f := fns[name]
			if f == nil {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// The allocation split is of the bytes allocated between each before and
// after profile: what was allocated before the run does not count.
func TestSplitAllocsIsTheDifference(t *testing.T) {
	const (
		app  = "runtime.mallocgc;encoding/json.Marshal;github.com/riptide-http/riptide/bench/eventstore.(*App).Call"
		http = "runtime.mallocgc;github.com/riptide-http/riptide.(*compatState).newRequest"
		api  = "runtime.mallocgc;net/http.(*Request).WithContext;github.com/riptide-http/riptide/bench/eventstore.withRequestID.func1"
	)
	dir := t.TempDir()
	var paths []string
	for i, stacks := range []map[string]int64{
		{app: 1000, http: 5000},             // before run 1: seeding, mostly
		{app: 7000, http: 6000, api: 1000},  // after run 1: +6000 app, +1000 http, +1000 api
		{app: 9000, http: 7000, api: 1500},  // before run 2
		{app: 15000, http: 8000, api: 2500}, // after run 2: +6000 app, +1000 http, +1000 api
	} {
		path := filepath.Join(dir, fmt.Sprintf("p%d.pprof", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := allocsProfile(stacks).Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, path)
	}
	sp, err := SplitProfiles(KindAllocs, paths, filepath.Join(dir, "merged.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if sp.TotalBytes != 16000 || sp.AppPct != 75 || sp.HTTPPct != 12.5 || sp.HandlerAPIPct != 12.5 || sp.RuntimePct != 0 {
		t.Errorf("split %+v, want 16000 bytes: 75%% app, 12.5%% HTTP layer, 12.5%% handler API", sp)
	}
}
