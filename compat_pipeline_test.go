package riptide

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
)

// Pipelined requests through the compat door leave as the native door's
// do (TestPipelinedBatchIsOneWrite): the responses to a batch of requests
// read at once go out in one write, whatever the handler sets before
// returning (no compat response is flushed on its own unless the handler
// flushes or outgrows the write buffer).
func TestCompatPipelinedBatchIsOneWrite(t *testing.T) {
	t.Parallel()
	hello := []byte("Hello, World!")
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"Write", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }},
		{"sniffed, no body", func(w http.ResponseWriter, r *http.Request) {}},
		{"Content-Type and Content-Length", func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h["Content-Type"] = []string{"text/plain; charset=utf-8"}
			h["Content-Length"] = []string{strconv.Itoa(len(hello))}
			w.Write(hello)
		}},
		{"WriteHeader and other fields", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Path", r.URL.Path)
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, r.URL.Path)
		}},
		{"reads the body", func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Write(b)
		}},
		{"Context watched", func(w http.ResponseWriter, r *http.Request) {
			_ = r.Context().Done() // starts the disconnect watch
			io.WriteString(w, "ok")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := newPipeListener()
			serveTest(t, &Server{Handler: FromHTTP(tc.h)}, testServeOptions{Listener: ln})
			var writes atomic.Int64
			nc := ln.dial(&writes)
			defer nc.Close()
			const n = 10
			batch := ""
			for i := range n {
				if tc.name == "reads the body" {
					batch += fmt.Sprintf("POST /r%d HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nb%02d", i, i)
				} else {
					batch += fmt.Sprintf("GET /r%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
				}
			}
			go io.WriteString(nc, batch)
			br := bufio.NewReader(nc)
			for i := range n {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadAll(res.Body); err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
			}
			if got := writes.Load(); got != 1 {
				t.Errorf("%d pipelined requests answered with %d writes, want 1", n, got)
			}
		})
	}
}
