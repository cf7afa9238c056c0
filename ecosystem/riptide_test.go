package ecosystem

import (
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
)

func init() {
	variants = append(variants, variant{name: "riptide", serve: serveRiptide})
}

// serveRiptide serves h through the compat door, riptide.FromHTTP.
func serveRiptide(t *testing.T, h http.Handler) string {
	t.Helper()
	ln := listen(t)
	srv := &riptide.Server{Handler: riptide.FromHTTP(h), Logger: slog.New(slog.DiscardHandler)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, riptide.ErrServerClosed) {
			t.Errorf("riptide Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}
