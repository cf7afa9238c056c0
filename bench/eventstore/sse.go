package eventstore

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// HeartbeatInterval is how often an idle SSE stream gets a comment line, so
// a server that learns of a gone client only from a failed write learns it.
const HeartbeatInterval = 15 * time.Second

// BadSubscribeBody answers a subscription without exactly one of stream and
// category, or with a malformed from.
var BadSubscribeBody = []byte(`{"error":{"code":-32602,"message":"subscribe needs stream or category, and an integer from"}}`)

// Topic is what a subscription follows: a stream from a version or a
// category from a global position.
type Topic struct {
	Stream, Category string
	From             int64
}

// ParseTopic reads the stream, category and from query arguments.
func ParseTopic(stream, category, from string) (Topic, bool) {
	t := Topic{Stream: stream, Category: category}
	if (stream == "") == (category == "") {
		return t, false
	}
	if from != "" {
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || n < 0 {
			return t, false
		}
		t.From = n
	}
	return t, true
}

// SSEWriter is what Follow needs from a transport: write bytes, flush them.
type SSEWriter interface {
	Write(p []byte) (int, error)
	Flush() error
}

// Follow streams t's history from t.From and then its live events to w
// until ctx ends, the broker drops the subscription or a write fails.
func (a *App) Follow(ctx context.Context, ns string, t Topic, w SSEWriter) error {
	sub := a.Broker.Subscribe(ns, t.Stream, t.Category)
	defer a.Broker.Unsubscribe(sub)
	// Subscribed before reading history, so nothing falls between; next
	// skips live events the history already sent.
	next := t.From
	key := func(ev Event) int64 {
		if t.Stream != "" {
			return ev.Version
		}
		return ev.Position
	}
	// A first line at once: it carries the reconnection delay, and it
	// makes servers that send the head only with body bytes (fasthttp's
	// adaptor) send it before the first event.
	if _, err := w.Write([]byte("retry: 1000\n\n")); err != nil {
		return err
	}
	var buf []byte
	send := func(ev Event) error {
		buf = AppendSSE(buf[:0], ev)
		next = key(ev) + 1
		_, err := w.Write(buf)
		return err
	}
	for {
		var evs []Event
		var err error
		if t.Stream != "" {
			evs, err = a.Store.ReadStream(ctx, ns, t.Stream, next, MaxReadLimit)
		} else {
			evs, err = a.Store.ReadCategory(ctx, ns, t.Category, next, MaxReadLimit)
		}
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := send(ev); err != nil {
				return err
			}
		}
		if len(evs) < MaxReadLimit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	beat := time.NewTicker(HeartbeatInterval)
	defer beat.Stop()
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			if key(ev) < next {
				continue
			}
			if err := send(ev); err != nil {
				return err
			}
		case <-beat.C:
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// AppendSSE appends ev as one Server-Sent Event: its position as the id,
// its type as the event name, the event as JSON data.
func AppendSSE(dst []byte, ev Event) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, ev.Position, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, ev.Type...)
	dst = append(dst, "\ndata: "...)
	b, _ := json.Marshal(ev)
	dst = append(dst, b...)
	return append(dst, "\n\n"...)
}

func (a *App) serveSubscribe(w http.ResponseWriter, r *http.Request) {
	ns, _ := r.Context().Value(namespaceKey).(string)
	q := r.URL.Query()
	t, ok := ParseTopic(q.Get("stream"), q.Get("category"), q.Get("from"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, BadSubscribeBody)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	a.Follow(r.Context(), ns, t, flushWriter{w, http.NewResponseController(w)})
}

type flushWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (f flushWriter) Flush() error { return f.rc.Flush() }
