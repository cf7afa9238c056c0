package riptide

// Exporting Stats: the Prometheus text exposition format (version 0.0.4,
// which OpenMetrics scrapers accept too), written with the standard
// library, and expvar.

import (
	"expvar"
	"net/http"
	"strconv"
)

// MetricsContentType is the Content-Type of the metrics text.
const MetricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// AppendMetrics appends st in the Prometheus text exposition format, every
// metric name prefixed "riptide_".
func AppendMetrics(b []byte, st *Stats) []byte {
	m := metricWriter{b: b}
	m.counter("connections_accepted_total", "Connections accepted.", st.Accepted)
	m.family("connections_rejected_total", "Connections closed at once, by reason.", "counter")
	m.sample("connections_rejected_total", "reason", "max_conns", st.Refused)
	m.sample("connections_rejected_total", "reason", "proxy_protocol", st.ProxyRejected)
	ae := &st.AcceptErrors
	m.family("accept_errors_total", "Failed accepts (each followed by a back-off), by cause.", "counter")
	m.sample("accept_errors_total", "cause", "fd_limit", ae.FDLimit)
	m.sample("accept_errors_total", "cause", "memory", ae.Memory)
	m.sample("accept_errors_total", "cause", "other", ae.Other)
	m.counter("connections_closed_total", "Connections closed by the server engine.", st.Closed)
	m.counter("connections_hijacked_total", "Connections taken over by a handler or an h2c upgrade.", st.Hijacked)
	m.family("connections", "Open connections by state.", "gauge")
	m.sample("connections", "state", "new", uint64(st.ConnsNew))
	m.sample("connections", "state", "active", uint64(st.ConnsActive))
	m.sample("connections", "state", "idle", uint64(st.ConnsIdle))
	m.counter("requests_total", "Requests answered.", st.Requests)
	m.family("responses_total", "Responses by status class.", "counter")
	for i, n := range st.Responses {
		m.sample("responses_total", "class", strconv.Itoa(i+1)+"xx", n)
	}
	m.counter("received_bytes_total", "Bytes read from connections.", st.BytesIn)
	m.counter("sent_bytes_total", "Bytes written to connections.", st.BytesOut)
	m.counter("panics_total", "Handler panics.", st.Panics)
	pe := &st.ParseErrors
	m.family("parse_errors_total", "Request heads rejected, by kind.", "counter")
	m.sample("parse_errors_total", "kind", "bad_request", pe.BadRequest)
	m.sample("parse_errors_total", "kind", "uri_too_long", pe.URITooLong)
	m.sample("parse_errors_total", "kind", "header_too_large", pe.HeaderTooLarge)
	m.sample("parse_errors_total", "kind", "not_implemented", pe.NotImplemented)
	m.sample("parse_errors_total", "kind", "version_not_supported", pe.VersionNotSupported)
	m.sample("parse_errors_total", "kind", "other", pe.Other)
	to := &st.Timeouts
	m.family("timeouts_total", "Connections closed for a timeout, by kind.", "counter")
	m.sample("timeouts_total", "kind", "header", to.Header)
	m.sample("timeouts_total", "kind", "idle", to.Idle)
	m.sample("timeouts_total", "kind", "body", to.Body)
	m.sample("timeouts_total", "kind", "write", to.Write)
	m.counter("http2_streams_total", "HTTP/2 streams served.", st.H2Streams)
	m.counter("http3_streams_total", "HTTP/3 request streams served.", st.H3Streams)
	m.counter("http2_extended_connects_total", "HTTP/2 extended CONNECT streams (RFC 8441, WebSocket over HTTP/2) served.", st.H2ExtendedConnects)
	m.counter("http3_extended_connects_total", "HTTP/3 extended CONNECT streams (RFC 9220, WebSocket over HTTP/3) served.", st.H3ExtendedConnects)
	m.counter("http2_resets_total", "HTTP/2 streams reset by the server.", st.H2Resets)
	m.counter("http2_client_resets_total", "HTTP/2 streams reset by the client.", st.H2ClientResets)
	m.histogram("request_duration_seconds", "Request duration, from the end of the head to the end of the response.", &st.Duration)
	return m.b
}

type metricWriter struct{ b []byte }

func (m *metricWriter) family(name, help, typ string) {
	m.b = append(m.b, "# HELP riptide_"...)
	m.b = append(m.b, name...)
	m.b = append(m.b, ' ')
	m.b = append(m.b, help...)
	m.b = append(m.b, "\n# TYPE riptide_"...)
	m.b = append(m.b, name...)
	m.b = append(m.b, ' ')
	m.b = append(m.b, typ...)
	m.b = append(m.b, '\n')
}

func (m *metricWriter) counter(name, help string, n uint64) {
	m.family(name, help, "counter")
	m.sample(name, "", "", n)
}

// sample appends one sample line, with one label when label is not empty
// (label values here are constants that need no escaping).
func (m *metricWriter) sample(name, label, value string, n uint64) {
	m.b = append(m.b, "riptide_"...)
	m.b = append(m.b, name...)
	if label != "" {
		m.b = append(m.b, '{')
		m.b = append(m.b, label...)
		m.b = append(m.b, `="`...)
		m.b = append(m.b, value...)
		m.b = append(m.b, `"}`...)
	}
	m.b = append(m.b, ' ')
	m.b = strconv.AppendUint(m.b, n, 10)
	m.b = append(m.b, '\n')
}

func (m *metricWriter) histogram(name, help string, h *Histogram) {
	m.family(name, help, "histogram")
	for i, le := range DurationBuckets {
		m.b = append(m.b, "riptide_"...)
		m.b = append(m.b, name...)
		m.b = append(m.b, `_bucket{le="`...)
		m.b = strconv.AppendFloat(m.b, le.Seconds(), 'g', -1, 64)
		m.b = append(m.b, `"} `...)
		m.b = strconv.AppendUint(m.b, h.Buckets[i], 10)
		m.b = append(m.b, '\n')
	}
	m.b = append(m.b, "riptide_"...)
	m.b = append(m.b, name...)
	m.b = append(m.b, `_bucket{le="+Inf"} `...)
	m.b = strconv.AppendUint(m.b, h.Count, 10)
	m.b = append(m.b, "\nriptide_"...)
	m.b = append(m.b, name...)
	m.b = append(m.b, "_sum "...)
	m.b = strconv.AppendFloat(m.b, h.Sum.Seconds(), 'g', -1, 64)
	m.b = append(m.b, '\n')
	m.sample(name+"_count", "", "", h.Count)
}

// MetricsHandler returns a native handler answering the server's
// statistics in the Prometheus text format (mount it at GET /metrics).
func (s *Server) MetricsHandler() Handler { return s.MetricsHandlerWith() }

// MetricsHandlerWith is MetricsHandler followed by the application's own
// metrics on the same endpoint: each extra function appends metric
// families in the Prometheus text format to dst and returns it (e.g.
// counters the application keeps with sync/atomic, or the text of a
// Prometheus client registry, see docs/fleet.md). Their names must not
// start with "riptide_". The text is built in the Ctx's buffer, so a
// scrape allocates nothing beyond what the functions do.
func (s *Server) MetricsHandlerWith(extra ...func(dst []byte) []byte) Handler {
	return HandlerFunc(func(x *Ctx) {
		var st Stats
		s.Stats(&st)
		x.SetHeader("Content-Type", MetricsContentType)
		b := AppendMetrics(x.scratch[:0], &st)
		for _, f := range extra {
			b = f(b)
		}
		x.scratch = b
		x.Write(b)
	})
}

// MetricsHTTPHandler is MetricsHandler for net/http routers (the compat
// door, or any http.Server).
func (s *Server) MetricsHTTPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var st Stats
		s.Stats(&st)
		w.Header().Set("Content-Type", MetricsContentType)
		w.Write(AppendMetrics(nil, &st))
	})
}

// PublishExpvar publishes the server's statistics as the expvar variable
// name (a JSON object of the Stats fields, served by expvar's
// /debug/vars). Like expvar.Publish it panics if name is already taken.
func (s *Server) PublishExpvar(name string) {
	expvar.Publish(name, expvar.Func(func() any {
		st := new(Stats)
		s.Stats(st)
		return st
	}))
}
