package main

// What both doors share: the notes, their validation, the application's
// metrics and the event feed. Nothing here knows about HTTP.

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxNoteBody bounds a POST /api/notes body (413 beyond it).
const maxNoteBody = 16 << 10

// maxTitle bounds a note's title, in bytes.
const maxTitle = 200

// note is one entry of the API, as it is sent.
type note struct {
	ID      int64     `json:"id"`
	Title   string    `json:"title"`
	Body    string    `json:"body,omitempty"`
	Created time.Time `json:"created"`
}

// noteInput is what POST /api/notes accepts.
type noteInput struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// validate returns why in cannot become a note, or "".
func (in *noteInput) validate() string {
	switch t := strings.TrimSpace(in.Title); {
	case t == "":
		return "title is required"
	case len(t) > maxTitle:
		return "title is longer than " + strconv.Itoa(maxTitle) + " bytes"
	}
	return ""
}

// apiError is the body of every error the API answers, on both doors.
type apiError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// store keeps the notes in memory and tells subscribers about new ones.
type store struct {
	mu    sync.Mutex
	next  int64
	notes map[int64]note
	subs  map[chan note]struct{}

	created atomic.Uint64 // notes_created_total
	deleted atomic.Uint64 // notes_deleted_total
}

// newStore returns a store holding one welcome note.
func newStore() *store {
	s := &store{notes: make(map[int64]note), subs: make(map[chan note]struct{})}
	s.add(noteInput{Title: "welcome", Body: "POST /api/notes to add one"})
	s.created.Store(0) // the welcome note is not the application's doing
	return s
}

// list returns the notes by id.
func (s *store) list() []note {
	s.mu.Lock()
	out := make([]note, 0, len(s.notes))
	for _, n := range s.notes {
		out = append(out, n)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b note) int { return int(a.ID - b.ID) })
	return out
}

// get returns the note with id.
func (s *store) get(id int64) (note, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.notes[id]
	return n, ok
}

// add stores a new note from in (already validated) and sends it to the
// subscribers; one whose buffer is full misses it rather than hold the
// request up.
func (s *store) add(in noteInput) note {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	n := note{ID: s.next, Title: strings.TrimSpace(in.Title), Body: in.Body, Created: time.Now().UTC()}
	s.notes[n.ID] = n
	s.created.Add(1)
	for ch := range s.subs {
		select {
		case ch <- n:
		default:
		}
	}
	return n
}

// remove deletes the note with id and reports whether there was one.
func (s *store) remove(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.notes[id]; !ok {
		return false
	}
	delete(s.notes, id)
	s.deleted.Add(1)
	return true
}

// subscribe returns a channel that receives every note added from now on,
// and the function that ends the subscription.
func (s *store) subscribe() (<-chan note, func()) {
	ch := make(chan note, 16)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}
}

// appendMetrics appends the application's metrics in the Prometheus text
// format, for GET /metrics next to riptide's own (Server.MetricsHandlerWith).
func (s *store) appendMetrics(dst []byte) []byte {
	dst = append(dst, "# HELP notes_created_total Notes created through the API.\n# TYPE notes_created_total counter\nnotes_created_total "...)
	dst = strconv.AppendUint(dst, s.created.Load(), 10)
	dst = append(dst, "\n# HELP notes_deleted_total Notes deleted through the admin API.\n# TYPE notes_deleted_total counter\nnotes_deleted_total "...)
	dst = strconv.AppendUint(dst, s.deleted.Load(), 10)
	return append(dst, '\n')
}

// sseEvent appends one server-sent event named name with v as JSON data.
func sseEvent(dst []byte, name string, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil { // the values sent here always encode
		panic(err)
	}
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// parseID parses a {id} path value.
func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}
