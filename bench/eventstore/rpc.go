package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
)

// MaxBodyBytes bounds an RPC request body; larger bodies are answered 413.
const MaxBodyBytes = 64 << 10

// Read limits: a read returns at most MaxReadLimit events, DefaultReadLimit
// when the call names none.
const (
	DefaultReadLimit = 20
	MaxReadLimit     = 1000
)

// JSON-RPC error codes (the JSON-RPC 2.0 ones, and one of the application's).
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeWrongVersion   = -32001
)

// Request is one RPC call.
type Request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Response is one RPC reply: Result or Error.
type Response struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Result any             `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is an RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// AppendParams are the parameters of "append". ExpectedVersion nil accepts
// any version; -1 requires a new stream.
type AppendParams struct {
	Stream          string          `json:"stream"`
	Type            string          `json:"type"`
	Data            json.RawMessage `json:"data"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	ExpectedVersion *int64          `json:"expected_version,omitempty"`
}

// AppendResult is the result of "append".
type AppendResult struct {
	Position int64 `json:"position"`
	Version  int64 `json:"version"`
}

// ReadParams are the parameters of "read_stream" (Stream, From = version)
// and "read_category" (Category, From = global position).
type ReadParams struct {
	Stream   string `json:"stream,omitempty"`
	Category string `json:"category,omitempty"`
	From     int64  `json:"from"`
	Limit    int    `json:"limit,omitempty"`
}

// ReadResult is the result of the read calls.
type ReadResult struct {
	Events []Event `json:"events"`
}

// VersionResult is the result of "last_version".
type VersionResult struct {
	Version int64 `json:"version"`
}

// App is the event-store service: a Store, the Broker of live
// subscriptions and the bearer tokens. Its HTTP faces are Handler (net/http)
// and the native ports, which all call Call.
type App struct {
	Store  Store
	Broker *Broker
	// Tokens maps bearer tokens to namespaces.
	Tokens map[string]string

	// appendMu orders append-then-publish, so subscribers see events in
	// position order.
	appendMu sync.Mutex
}

// DemoTokens are the bearer tokens every benchmark server accepts.
var DemoTokens = map[string]string{"token-alpha": "alpha", "token-beta": "beta"}

// NewApp returns an App over store with the given tokens.
func NewApp(store Store, tokens map[string]string) *App {
	return &App{Store: store, Broker: NewBroker(), Tokens: tokens}
}

// Namespace returns the namespace of an Authorization header value
// ("Bearer TOKEN"), or false.
func (a *App) Namespace(authorization string) (string, bool) {
	const prefix = "Bearer "
	if len(authorization) <= len(prefix) || authorization[:len(prefix)] != prefix {
		return "", false
	}
	ns, ok := a.Tokens[authorization[len(prefix):]]
	return ns, ok
}

// Call runs one RPC request body in namespace ns and returns the HTTP
// status and the JSON reply. Transport-independent, so every server gives
// byte-identical answers.
func (a *App) Call(ctx context.Context, ns string, body []byte) (int, []byte) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return reply(http.StatusBadRequest, Response{Error: &Error{CodeParse, "parse error: " + err.Error()}})
	}
	if req.Method == "" {
		return reply(http.StatusBadRequest, Response{ID: req.ID, Error: &Error{CodeInvalidRequest, "missing method"}})
	}
	result, rerr := a.dispatch(ctx, ns, req)
	return reply(http.StatusOK, Response{ID: req.ID, Result: result, Error: rerr})
}

func reply(status int, r Response) (int, []byte) {
	b, err := json.Marshal(r)
	if err != nil {
		return http.StatusInternalServerError, []byte(`{"error":{"code":-32603,"message":"encoding the reply failed"}}`)
	}
	return status, b
}

func (a *App) dispatch(ctx context.Context, ns string, req Request) (any, *Error) {
	switch req.Method {
	case "append":
		var p AppendParams
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Stream == "" || p.Type == "" || len(p.Data) == 0 ||
			strings.ContainsAny(p.Type, "\r\n") {
			return nil, &Error{CodeInvalidParams, "append needs stream, type and data"}
		}
		return a.appendEvent(ctx, ns, p)
	case "read_stream", "read_category":
		var p ReadParams
		byStream := req.Method == "read_stream"
		if err := json.Unmarshal(req.Params, &p); err != nil || (byStream && p.Stream == "") || (!byStream && p.Category == "") {
			return nil, &Error{CodeInvalidParams, req.Method + " needs stream or category"}
		}
		return a.read(ctx, ns, byStream, p)
	case "last_version":
		var p ReadParams
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Stream == "" {
			return nil, &Error{CodeInvalidParams, "last_version needs stream"}
		}
		v, err := a.Store.LastVersion(ctx, ns, p.Stream)
		if err != nil {
			return nil, internal(err)
		}
		return VersionResult{v}, nil
	}
	return nil, &Error{CodeMethodNotFound, "unknown method " + req.Method}
}

func (a *App) appendEvent(ctx context.Context, ns string, p AppendParams) (any, *Error) {
	e := NewEvent{Stream: p.Stream, Type: p.Type, Data: p.Data, Metadata: p.Metadata, Expected: AnyVersion}
	if p.ExpectedVersion != nil {
		e.Expected = *p.ExpectedVersion
	}
	a.appendMu.Lock()
	ev, err := a.Store.Append(ctx, ns, e)
	if err == nil {
		a.Broker.Publish(ns, ev)
	}
	a.appendMu.Unlock()
	if errors.Is(err, ErrWrongVersion) {
		return nil, &Error{CodeWrongVersion, "wrong expected version"}
	}
	if err != nil {
		return nil, internal(err)
	}
	return AppendResult{Position: ev.Position, Version: ev.Version}, nil
}

func (a *App) read(ctx context.Context, ns string, stream bool, p ReadParams) (any, *Error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	limit = min(limit, MaxReadLimit)
	var evs []Event
	var err error
	if stream {
		evs, err = a.Store.ReadStream(ctx, ns, p.Stream, p.From, limit)
	} else {
		evs, err = a.Store.ReadCategory(ctx, ns, p.Category, p.From, limit)
	}
	if err != nil {
		return nil, internal(err)
	}
	if evs == nil {
		evs = []Event{}
	}
	return ReadResult{evs}, nil
}

func internal(err error) *Error { return &Error{CodeInternal, "internal error: " + err.Error()} }
