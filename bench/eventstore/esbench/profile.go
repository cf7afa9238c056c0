package esbench

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// Split is a CPU or allocation profile divided between the server's HTTP
// layer (server library, net, bufio and the syscalls they make), the
// net/http API the handlers call themselves (ServeMux, Header, WithContext,
// MaxBytesReader, ResponseController: the same code under every server
// while the handlers are unchanged), the application (the event-store code
// and its middleware, encoding/json, log/slog, database/sql, SQLite, gzip)
// and the runtime alone (GC workers, scheduler).
type Split struct {
	// TotalSeconds is a CPU profile's total; TotalBytes an allocation
	// profile's (bytes allocated during the measured runs).
	TotalSeconds   float64 `json:"total_seconds,omitempty"`
	TotalBytes     float64 `json:"total_bytes,omitempty"`
	HTTPPct        float64 `json:"http_pct"`
	HandlerAPIPct  float64 `json:"handler_api_pct"`
	AppPct         float64 `json:"app_pct"`
	RuntimePct     float64 `json:"runtime_pct"`
	ProfileFile    string  `json:"profile_file"`
	ProfileCommand string  `json:"profile_command"`
}

// Frames are attributed by package prefix. Frames of neither list (the
// runtime's allocation and write barriers, syscalls, sync, strings, io,
// time…) are charged to the nearest caller that is on one: both sides use
// them (SQLite's file I/O is syscalls too).
var (
	httpPrefixes = []string{"net/http.", "net/textproto.", "net/url.", "net.", "bufio.",
		"github.com/valyala/", "github.com/riptide-http/riptide."}
	appPrefixes = []string{"github.com/riptide-http/riptide/bench/", "encoding/json.", "log/slog.",
		"database/sql", "modernc.org/", "compress/", "hash/", "runtime/metrics."}
	// handlerAPIPrefixes are the HTTP-layer functions the application's
	// handlers call directly. A sample whose first HTTP-layer frames are
	// these, called from the application, is "handler API": every server
	// runs the same code for it while the handlers stay unchanged.
	handlerAPIPrefixes = []string{"net/http.Header.", "net/textproto.MIMEHeader.", "net/textproto.CanonicalMIMEHeaderKey",
		"net/http.CanonicalHeaderKey", "net/http.(*Request).WithContext", "net/http.(*Request).Context",
		"net/http.MaxBytesReader", "net/http.(*maxBytesReader).", "net/http.NewResponseController",
		"net/http.(*ResponseController).", "net/http.(*ServeMux).", "net/http.HandlerFunc.ServeHTTP",
		"net/url.(*URL).Query", "net/url.ParseQuery", "net/url.parseQuery", "net/url.Values.",
		"net/url.QueryUnescape", "net/url.unescape"}
)

// Profile kinds: the value each splits.
const (
	KindCPU    = "cpu"
	KindAllocs = "allocs"
)

// SplitProfiles merges the profiles at paths, writes the merged profile to
// merged and splits its samples. For KindAllocs, paths come in pairs
// (before, after a run) and each run's allocations are after minus before.
func SplitProfiles(kind string, paths []string, merged string) (Split, error) {
	var ps []*profile.Profile
	for i, path := range paths {
		p, err := readProfile(path)
		if err != nil {
			return Split{}, err
		}
		if kind == KindAllocs && i%2 == 0 {
			p.Scale(-1)
		}
		ps = append(ps, p)
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return Split{}, err
	}
	f, err := os.Create(merged)
	if err != nil {
		return Split{}, err
	}
	if err := errors.Join(p.Write(f), f.Close()); err != nil {
		return Split{}, err
	}
	if kind == KindAllocs {
		vi := sampleIndex(p, "alloc_space")
		if vi < 0 {
			return Split{}, fmt.Errorf("%s: no alloc_space samples", merged)
		}
		sp := split(p, vi)
		sp.TotalBytes = sp.TotalSeconds * 1e9
		sp.TotalSeconds = 0
		return sp, nil
	}
	return split(p, len(p.SampleType)-1), nil
}

func sampleIndex(p *profile.Profile, typ string) int {
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	return -1
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return profile.Parse(f)
}

// split divides p's sample value vi (CPU nanoseconds or bytes; the total
// is returned as TotalSeconds, value/1e9).
func split(p *profile.Profile, vi int) Split {
	var http, api, app, rt float64
	for _, s := range p.Sample {
		v := float64(s.Value[vi])
		switch classify(s) {
		case "http":
			http += v
		case "api":
			api += v
		case "app":
			app += v
		default:
			rt += v
		}
	}
	total := http + api + app + rt
	sp := Split{TotalSeconds: total / 1e9}
	if total != 0 {
		sp.HTTPPct, sp.HandlerAPIPct = http/total*100, api/total*100
		sp.AppPct, sp.RuntimePct = app/total*100, rt/total*100
	}
	return sp
}

// classify walks a sample's stack from the leaf: the first frame that is
// the HTTP layer's or the application's decides ("http", "app"), except
// that handler-API frames defer to the next such frame above them: "api"
// when that is the application's.
func classify(s *profile.Sample) string {
	inAPI := false
	for _, loc := range s.Location {
		// Inlined frames come first in Line, innermost first.
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			// Checked first: the app's packages sit under the library's path.
			if hasPrefix(name, appPrefixes) {
				if inAPI {
					return "api"
				}
				return "app"
			}
			if hasPrefix(name, handlerAPIPrefixes) {
				inAPI = true
				continue
			}
			if hasPrefix(name, httpPrefixes) {
				return "http"
			}
		}
	}
	if inAPI {
		return "api"
	}
	return "runtime"
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
