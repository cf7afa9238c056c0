package esbench

import (
	"errors"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// Split is a CPU profile divided between the HTTP layer (server library,
// net, network syscalls), the application (the event-store code and its
// middleware, encoding/json, log/slog, database/sql, SQLite, gzip) and the
// runtime alone (GC workers, scheduler).
type Split struct {
	TotalSeconds   float64 `json:"total_seconds"`
	HTTPPct        float64 `json:"http_pct"`
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
)

// SplitProfiles merges the CPU profiles at paths, writes the merged
// profile to merged and splits its samples.
func SplitProfiles(paths []string, merged string) (Split, error) {
	var ps []*profile.Profile
	for _, path := range paths {
		p, err := readProfile(path)
		if err != nil {
			return Split{}, err
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
	return split(p), nil
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return profile.Parse(f)
}

// split divides p's CPU time (its last sample value, nanoseconds).
func split(p *profile.Profile) Split {
	vi := len(p.SampleType) - 1
	var http, app, rt float64
	for _, s := range p.Sample {
		v := float64(s.Value[vi])
		switch classify(s) {
		case "http":
			http += v
		case "app":
			app += v
		default:
			rt += v
		}
	}
	total := http + app + rt
	sp := Split{TotalSeconds: total / 1e9}
	if total > 0 {
		sp.HTTPPct, sp.AppPct, sp.RuntimePct = http/total*100, app/total*100, rt/total*100
	}
	return sp
}

// classify walks a sample's stack from the leaf: the first frame that is
// the HTTP layer's or the application's decides.
func classify(s *profile.Sample) string {
	for _, loc := range s.Location {
		// Inlined frames come first in Line, innermost first.
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			// Checked first: the app's packages sit under the library's path.
			if hasPrefix(name, appPrefixes) {
				return "app"
			}
			if hasPrefix(name, httpPrefixes) {
				return "http"
			}
		}
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
