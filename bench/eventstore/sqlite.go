package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// schema is the events table: one global log per database, with the
// namespace as the first column of both lookup indexes.
const schema = `
CREATE TABLE IF NOT EXISTS events (
	position  INTEGER PRIMARY KEY AUTOINCREMENT,
	namespace TEXT    NOT NULL,
	stream    TEXT    NOT NULL,
	category  TEXT    NOT NULL,
	version   INTEGER NOT NULL,
	type      TEXT    NOT NULL,
	data      TEXT    NOT NULL,
	metadata  TEXT,
	time      INTEGER NOT NULL -- Unix nanoseconds, UTC
);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream ON events (namespace, stream, version);
CREATE INDEX IF NOT EXISTS events_category ON events (namespace, category, position);
`

// SQLiteStore is the Store on SQLite (modernc.org/sqlite, pure Go) in WAL
// mode. Appends go through one writer connection, so they never contend for
// the database lock; reads use a pool of reader connections.
type SQLiteStore struct {
	w, r *sql.DB
}

// OpenSQLite opens (creating if needed) the database file at path.
func OpenSQLite(path string) (*SQLiteStore, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(5000)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	dsn := "file:" + path + "?" + q.Encode()
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("schema: %w", err)
	}
	r, err := sql.Open("sqlite", dsn+"&mode=ro")
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return &SQLiteStore{w: w, r: r}, nil
}

// Append implements Store.
func (s *SQLiteStore) Append(ctx context.Context, ns string, e NewEvent) (Event, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Event{}, err
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), -1) FROM events WHERE namespace = ? AND stream = ?`,
		ns, e.Stream).Scan(&last)
	if err != nil {
		return Event{}, err
	}
	if e.Expected != AnyVersion && e.Expected != last {
		return Event{}, ErrWrongVersion
	}
	ev := Event{Stream: e.Stream, Version: last + 1, Type: e.Type, Data: e.Data, Metadata: e.Metadata,
		Time: time.Now().UTC()}
	var meta any
	if len(e.Metadata) > 0 {
		meta = string(e.Metadata)
	}
	err = tx.QueryRowContext(ctx,
		`INSERT INTO events (namespace, stream, category, version, type, data, metadata, time)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING position`,
		ns, e.Stream, Category(e.Stream), ev.Version, e.Type, string(e.Data), meta, ev.Time.UnixNano()).Scan(&ev.Position)
	if err != nil {
		return Event{}, err
	}
	return ev, tx.Commit()
}

// ReadStream implements Store.
func (s *SQLiteStore) ReadStream(ctx context.Context, ns, stream string, from int64, limit int) ([]Event, error) {
	return s.query(ctx, `SELECT position, stream, version, type, data, metadata, time FROM events
		WHERE namespace = ? AND stream = ? AND version >= ? ORDER BY version LIMIT ?`,
		ns, stream, from, limit)
}

// ReadCategory implements Store.
func (s *SQLiteStore) ReadCategory(ctx context.Context, ns, category string, from int64, limit int) ([]Event, error) {
	return s.query(ctx, `SELECT position, stream, version, type, data, metadata, time FROM events
		WHERE namespace = ? AND category = ? AND position >= ? ORDER BY position LIMIT ?`,
		ns, category, from, limit)
}

func (s *SQLiteStore) query(ctx context.Context, q string, args ...any) ([]Event, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var data string
		var meta sql.NullString
		var t int64
		if err := rows.Scan(&ev.Position, &ev.Stream, &ev.Version, &ev.Type, &data, &meta, &t); err != nil {
			return nil, err
		}
		ev.Data = []byte(data)
		if meta.Valid {
			ev.Metadata = []byte(meta.String)
		}
		ev.Time = time.Unix(0, t).UTC()
		out = append(out, ev)
	}
	return out, rows.Err()
}

// LastVersion implements Store.
func (s *SQLiteStore) LastVersion(ctx context.Context, ns, stream string) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), -1) FROM events WHERE namespace = ? AND stream = ?`,
		ns, stream).Scan(&v)
	return v, err
}

// Close implements Store.
func (s *SQLiteStore) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}
