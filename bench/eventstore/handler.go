package eventstore

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
)

// Handler returns the whole service as one http.Handler: ServeMux routing
// under the request-ID, access-log and panic-recovery middleware; /rpc and
// /subscribe behind bearer authentication, /rpc behind gzip. log receives
// the access log and panics.
func (a *App) Handler(log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /rpc", a.authenticate(gzipLarge(http.HandlerFunc(a.serveRPC))))
	mux.Handle("GET /subscribe", a.authenticate(http.HandlerFunc(a.serveSubscribe)))
	mux.HandleFunc("GET "+MetricsPath, serveMetrics)
	// The CPU-profile endpoint Go services commonly expose; the benchmark
	// runner's -profile takes the measured runs' profiles from it.
	mux.HandleFunc("GET "+ProfilePath, pprof.Profile)
	mux.Handle("GET "+AllocsPath, pprof.Handler("allocs"))
	return withRequestID(accessLog(log, recoverPanics(log, mux)))
}

func (a *App) serveRPC(w http.ResponseWriter, r *http.Request) {
	ns, _ := r.Context().Value(namespaceKey).(string)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeJSON(w, http.StatusRequestEntityTooLarge, TooLargeBody)
			return
		}
		writeJSON(w, http.StatusBadRequest, BadBodyBody)
		return
	}
	status, out := a.Call(r.Context(), ns, body)
	writeJSON(w, status, out)
}

// ProfilePath serves a CPU profile of the next ?seconds=N seconds
// (net/http/pprof.Profile), unauthenticated like MetricsPath; AllocsPath
// serves the allocation profile (cumulative since the start).
const (
	ProfilePath = "/debug/pprof/profile"
	AllocsPath  = "/debug/pprof/allocs"
)

func serveMetrics(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, MetricsJSON())
}
