package ecosystem

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riptide-http/riptide"
)

// TestMetricsParseWithPrometheus: riptide's metrics text, from the native
// and the net/http handler, parses with Prometheus's own text-format parser,
// and its values are the server's statistics.
func TestMetricsParseWithPrometheus(t *testing.T) {
	srv := &riptide.Server{Logger: slog.New(slog.DiscardHandler)}
	native, compat := srv.MetricsHandler(), riptide.FromHTTP(srv.MetricsHTTPHandler())
	srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/metrics":
			native.ServeCtx(x)
		case "/metrics-compat":
			compat.ServeCtx(x)
		default:
			x.SetStatus(404)
		}
	})
	ln := listen(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	c := &http.Client{Timeout: 10 * time.Second}
	for range 3 {
		do(t, c, "GET", base+"/nothing", "").expect(t, 404, "")
	}
	for _, path := range []string{"/metrics", "/metrics-compat"} {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := expfmt.ResponseFormat(resp.Header); got.FormatType() != expfmt.TypeTextPlain {
			t.Errorf("%s: Content-Type %q negotiates as %v", path, resp.Header.Get("Content-Type"), got)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, body)
		}
		if len(fams) < 15 {
			t.Errorf("%s: %d metric families", path, len(fams))
		}
		for _, m := range fams["riptide_responses_total"].GetMetric() {
			if m.GetLabel()[0].GetValue() == "4xx" && m.GetCounter().GetValue() != 3 {
				t.Errorf("%s: 4xx responses %v, want 3", path, m.GetCounter().GetValue())
			}
		}
		h := fams["riptide_request_duration_seconds"].GetMetric()[0].GetHistogram()
		if h.GetSampleCount() < 3 || len(h.GetBucket()) != len(riptide.DurationBuckets)+1 { // +Inf included
			t.Errorf("%s: histogram %v", path, h)
		}
	}
}
