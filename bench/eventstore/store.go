package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Event is one stored event.
type Event struct {
	// Position is the event's global position in its namespace's log
	// (1-based, increasing in append order).
	Position int64  `json:"position"`
	Stream   string `json:"stream"`
	// Version is the event's 0-based index within its stream.
	Version  int64           `json:"version"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Time     time.Time       `json:"time"`
}

// AnyVersion, as an expected version, accepts any current stream version.
const AnyVersion int64 = -2

// NoStream is the version of a stream without events: as an expected
// version it requires the stream not to exist yet.
const NoStream int64 = -1

// ErrWrongVersion reports an append whose expected version is not the
// stream's current version.
var ErrWrongVersion = errors.New("wrong expected version")

// NewEvent is an event to append.
type NewEvent struct {
	Stream   string
	Type     string
	Data     json.RawMessage
	Metadata json.RawMessage
	// Expected is the stream version the writer last saw, NoStream, or
	// AnyVersion.
	Expected int64
}

// Store persists events per namespace. Implementations are safe for
// concurrent use.
type Store interface {
	// Append stores e and returns it with its position, version and time,
	// or ErrWrongVersion.
	Append(ctx context.Context, ns string, e NewEvent) (Event, error)
	// ReadStream returns up to limit events of stream from version from on.
	ReadStream(ctx context.Context, ns, stream string, from int64, limit int) ([]Event, error)
	// ReadCategory returns up to limit events of every stream of category
	// from global position from on.
	ReadCategory(ctx context.Context, ns, category string, from int64, limit int) ([]Event, error)
	// LastVersion returns the stream's last version, NoStream if it has no
	// events.
	LastVersion(ctx context.Context, ns, stream string) (int64, error)
	// Close releases the store's resources.
	Close() error
}

// Category is the part of a stream name before its first '-' (the Message
// DB convention: stream "account-42" is in category "account").
func Category(stream string) string {
	c, _, _ := strings.Cut(stream, "-")
	return c
}
