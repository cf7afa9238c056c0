package riptide_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestH3DeclaredLengthOneDataFrame: over HTTP/3, a body with a declared
// Content-Length leaves as one DATA frame however the handler writes it
// (here in 32 KiB pieces, on both doors), so that each later piece is one
// stream write of its own bytes; a body of unknown length is framed piece
// by piece, and a body shorter than declared still fails at the client.
func TestH3DeclaredLengthOneDataFrame(t *testing.T) {
	t.Parallel()
	body := make([]byte, 256<<10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	const piece = 32 << 10
	native := func(declare bool, send int) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			if declare {
				c.SetContentLength(int64(len(body)))
			}
			for off := 0; off < send; off += piece {
				c.Write(body[off : off+piece])
			}
		})
	}
	compat := func(declare bool, send int) riptide.Handler {
		return riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if declare {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			}
			for off := 0; off < send; off += piece {
				w.Write(body[off : off+piece])
			}
		}))
	}
	for _, door := range []struct {
		name string
		h    func(declare bool, send int) riptide.Handler
	}{{"native", native}, {"compat", compat}} {
		for _, tc := range []struct {
			name    string
			declare bool
			send    int
			frames  int64 // DATA frames; 0: the response must fail
		}{
			{"declared", true, len(body), 1},
			{"unknown length", false, len(body), -1},
			{"short", true, len(body) - piece, 0},
		} {
			t.Run(door.name+"/"+tc.name, func(t *testing.T) {
				srv := &riptide.Server{Handler: door.h(tc.declare, tc.send)}
				c := h3PipeClient(t, srv)
				var frames atomic.Int64
				countH3Pipe(c, &frames, nil)
				resp, err := c.Get("https://example.com/")
				if tc.frames == 0 {
					if err == nil {
						t.Fatalf("a body shorter than its Content-Length was read whole (%d DATA frames)", frames.Load())
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !bytes.Equal(got, body) {
					t.Fatalf("status %d, body %d bytes (want %d, equal: %v)", resp.StatusCode, len(got), len(body), bytes.Equal(got, body))
				}
				if n := frames.Load(); tc.frames > 0 && n != tc.frames || tc.frames < 0 && n < 2 {
					t.Errorf("body sent in %d DATA frames, want %d (-1: one per piece or more)", n, tc.frames)
				}
			})
		}
	}
}

// TestH3ResponseEndsInOneWrite: a response committed when the handler
// returns (head, a body of known length, trailers or not) reaches the
// QUIC stream in one write on both doors, so that quic-go cannot send its
// trailers in a later packet than its body: Chromium fails such a fetch
// under load once the body is complete at its Content-Length
// ("ERR_CONNECTION_CLOSED", seen in TestInteropChromium).
func TestH3ResponseEndsInOneWrite(t *testing.T) {
	t.Parallel()
	body := []byte("hello, trailers!!!")
	for _, door := range []struct {
		name string
		h    func(trailers bool) riptide.Handler
	}{
		{"native", func(trailers bool) riptide.Handler {
			return riptide.HandlerFunc(func(c *riptide.Ctx) {
				c.Write(body)
				if trailers {
					c.SetTrailer("x-checksum", "abc")
				}
			})
		}},
		{"compat", func(trailers bool) riptide.Handler {
			return riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if trailers {
					w.Header().Set("Trailer", "X-Checksum")
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				w.Write(body)
				if trailers {
					w.Header().Set("X-Checksum", "abc")
				}
			}))
		}},
	} {
		for _, trailers := range []bool{false, true} {
			t.Run(door.name+"/trailers="+strconv.FormatBool(trailers), func(t *testing.T) {
				srv := &riptide.Server{Handler: door.h(trailers)}
				c := h3PipeClient(t, srv)
				var writes atomic.Int64
				countH3Pipe(c, nil, &writes)
				resp, err := c.Get("https://example.com/")
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !bytes.Equal(got, body) {
					t.Fatalf("status %d, body %q", resp.StatusCode, got)
				}
				if trailers && resp.Header.Get("X-Checksum") != "abc" {
					t.Fatalf("trailer X-Checksum %q, want abc (header %v)", resp.Header.Get("X-Checksum"), resp.Header)
				}
				if n := writes.Load(); n != 1 {
					t.Errorf("the response took %d stream writes, want 1", n)
				}
			})
		}
	}
}
