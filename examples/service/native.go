package main

// The service on the native door: func(*riptide.Ctx) handlers, package
// router, riptide's middleware and the compress module.

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/compress"
	"github.com/riptide-http/riptide/middleware"
	"github.com/riptide-http/riptide/router"
	"github.com/riptide-http/riptide/static"
)

// nativeServer returns the riptide Server for the native door: every
// error (the router's 404/405, BasicAuth's 401, BindJSON's 400/413/415,
// Recover's 500) is JSON through Server.ErrorHandler.
func nativeServer(cfg config, st *store, log *slog.Logger) (*riptide.Server, error) {
	files, err := static.New(cfg.static, static.Options{})
	if err != nil {
		return nil, err
	}
	srv := &riptide.Server{Engine: cfg.engine, Logger: log, ErrorHandler: jsonError}
	h := &nativeAPI{st: st, log: log}

	r := router.New()
	r.Use(
		middleware.RequestID(),                         // X-Request-Id on every response, the 500 too
		middleware.AccessLog(log, slog.LevelInfo, nil), // logs panics as 500
		middleware.Recover(log),                        // answers the 500 through ErrorHandler
		compress.New(compress.Config{}),                // zstd, br or gzip for JSON, text and static files
	)
	r.Handle("GET /metrics", srv.MetricsHandlerWith(st.appendMetrics))
	// The page and its assets: every GET the routes below do not serve.
	// The groups still own their prefixes (a catch-all is not inside
	// /admin, so it never serves /admin/other: BasicAuth asks first), and
	// the static handler's 404 goes through ErrorHandler as JSON too.
	r.Handle("GET /", files)

	// The /api group owns its prefix: CORS answers the preflights of its
	// routes, and its 404/405 are JSON too.
	api := r.Group("/api", middleware.CORS(middleware.CORSOptions{
		AllowedOrigins: cfg.origins,
		AllowedMethods: []string{"GET", "POST"},
		AllowedHeaders: []string{"Content-Type"},
		MaxAge:         600,
	}))
	api.HandleFunc("GET /notes", h.list)
	api.HandleFunc("GET /notes/{id}", h.get)
	api.Handle("POST /notes", middleware.BodyLimit(maxNoteBody)(riptide.HandlerFunc(h.create)))
	api.HandleFunc("GET /events", h.events)

	// /admin and everything below it ask for credentials first, also the
	// paths no route serves (401, then a JSON 404).
	admin := r.Group("/admin", middleware.BasicAuth("notes admin", middleware.Users(cfg.users)))
	admin.HandleFunc("GET", h.whoami) // bare /admin
	admin.HandleFunc("DELETE /notes/{id}", h.remove)

	srv.Handler = r
	return srv, nil
}

// jsonError is the Server.ErrorHandler: {"error": msg, "status": code}.
func jsonError(c *riptide.Ctx, code int, msg string) {
	c.SetHeader("X-Content-Type-Options", "nosniff")
	c.JSON(code, &apiError{Error: msg, Status: code})
}

type nativeAPI struct {
	st  *store
	log *slog.Logger
}

func (h *nativeAPI) list(c *riptide.Ctx) {
	notes := h.st.list()
	c.JSON(http.StatusOK, notes)
}

func (h *nativeAPI) get(c *riptide.Ctx) {
	id, ok := parseID(c.PathValueString("id"))
	if !ok {
		c.Error(http.StatusBadRequest, "id must be a positive integer")
		return
	}
	n, ok := h.st.get(id)
	if !ok {
		c.Error(http.StatusNotFound, "note not found")
		return
	}
	c.JSON(http.StatusOK, &n)
}

func (h *nativeAPI) create(c *riptide.Ctx) {
	var in noteInput
	if c.BindJSON(&in) != nil {
		return // answered: 415, 413 or 400
	}
	if msg := in.validate(); msg != "" {
		c.Error(http.StatusBadRequest, msg)
		return
	}
	n := h.st.add(in)
	c.SetHeader("Location", "/api/notes/"+strconv.FormatInt(n.ID, 10))
	c.JSON(http.StatusCreated, &n)
}

func (h *nativeAPI) whoami(c *riptide.Ctx) {
	c.JSON(http.StatusOK, map[string]string{"user": middleware.BasicAuthUser(c)})
}

func (h *nativeAPI) remove(c *riptide.Ctx) {
	id, ok := parseID(c.PathValueString("id"))
	if !ok {
		c.Error(http.StatusBadRequest, "id must be a positive integer")
		return
	}
	if !h.st.remove(id) {
		c.Error(http.StatusNotFound, "note not found")
		return
	}
	h.log.Info("note deleted", "id", id, "by", middleware.BasicAuthUser(c))
	c.SetStatus(http.StatusNoContent)
}

// events streams a "hello" event, then a "note" event for every note
// added, until the client leaves or the server shuts down.
func (h *nativeAPI) events(c *riptide.Ctx) {
	notes, cancel := h.st.subscribe()
	defer cancel()
	c.SetContentType("text/event-stream")
	c.SetHeader("Cache-Control", "no-cache")
	c.Write(sseEvent(nil, "hello", map[string]string{"stream": "notes"}))
	if c.Flush() != nil {
		return
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-c.Done(): // the client left
			return
		case <-c.ShuttingDown(): // Shutdown began: end the stream so it need not wait
			return
		case n := <-notes:
			c.Write(sseEvent(nil, "note", &n))
		case <-ping.C:
			c.WriteString(": ping\n\n")
		}
		if c.Flush() != nil {
			return
		}
	}
}
