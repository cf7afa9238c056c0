package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
)

// probeRoutes serves the routes the suite expects: GET/HEAD/OPTIONS / with
// 200, POST / echoing the body, /echo listing the request headers as
// "Name: Value" lines and /cookie listing the parsed cookies as
// "name=value" lines.
func probeRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "OK")
		case http.MethodPost:
			w.Header().Set("Content-Type", "text/plain")
			io.Copy(w, r.Body)
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS, POST")
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			for _, v := range r.Header[k] {
				fmt.Fprintf(w, "%s: %s\n", k, v)
			}
		}
	})
	mux.HandleFunc("/cookie", func(w http.ResponseWriter, r *http.Request) {
		for _, c := range r.Cookies() {
			fmt.Fprintf(w, "%s=%s\n", c.Name, c.Value)
		}
	})
	return mux
}

// TestNetHTTP runs the whole suite against a net/http server and checks the
// verdicts that net/http's known behaviour determines.
func TestNetHTTP(t *testing.T) {
	srv := httptest.NewUnstartedServer(probeRoutes())
	srv.Config.ErrorLog = nil
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Start()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	r := &Runner{Addr: addr, ReadTimeout: time.Second, CloseWait: 200 * time.Millisecond, Concurrency: 8}
	results := r.Run(context.Background(), Checks())
	got := map[string]Result{}
	for _, res := range results {
		got[res.ID] = res
		if res.Verdict == Skip || res.Verdict == "" {
			t.Errorf("%s: verdict %q (%s)", res.ID, res.Verdict, res.Reason)
		}
	}
	want := map[string]Verdict{
		"COMP-BASELINE":                         Pass, // valid GET
		"COMP-CHUNKED-BODY":                     Pass, // RFC 9112 §7.1: chunked body decoded
		"COMP-POST-CL-BODY":                     Pass,
		"COMP-CONNECTION-CLOSE":                 Pass, // RFC 9112 §9.6
		"RFC9112-7.1-MISSING-HOST":              Pass, // RFC 9112 §3.2: net/http answers 400
		"RFC9110-5.4-DUPLICATE-HOST":            Pass,
		"RFC9112-2.2-BARE-LF-HEADER":            Warn, // net/http accepts bare LF
		"SMUG-CL-TE-BOTH":                       Warn, // RFC 9112 §6.1: processed with TE
		"SMUG-CLTE-SMUGGLED-GET":                Fail, // net/http keeps the connection and runs the embedded GET
		"SMUG-PIPELINE-SAFE":                    Pass,
		"SMUG-DUPLICATE-CL":                     Pass,
		"COMP-HEAD-NO-BODY":                     Pass,
		"COOK-ECHO":                             Pass,
		"COOK-PARSED-MULTI":                     Pass,
		"NORM-UNDERSCORE-CL":                    Warn, // Content_Length echoed under its own name
		"MAL-NUL-IN-HEADER-VALUE":               Pass,
		"COMP-405-ALLOW":                        Pass,
		"COMP-DATE-HEADER":                      Pass,
		"MAL-EMPTY-REQUEST":                     Pass, // timeout or close are both fine
		"SMUG-CLTE-SMUGGLED-GET-CL-PLUS":        Pass, // invalid Content-Length rejected
		"RFC9112-3-CR-ONLY-LINE-ENDING":         Pass,
		"RFC9110-5.6.2-SP-BEFORE-COLON":         Pass,
		"SMUG-TE-SP-BEFORE-COLON":               Pass,
		"COMP-UPGRADE-UNKNOWN":                  Pass,
		"RFC9112-6.1-CL-NON-NUMERIC":            Pass,
		"SMUG-CL-COMMA-DIFFERENT":               Pass,
		"SMUG-CLTE-SMUGGLED-GET-CL-NON-NUMERIC": Pass,
	}
	for id, v := range want {
		if got[id].Verdict != v {
			t.Errorf("%s: got %s (%s: %s), want %s", id, got[id].Verdict, got[id].Got, got[id].Reason, v)
		}
	}
	all, _ := Summarize(results)
	t.Logf("net/http: %s", all)
}
