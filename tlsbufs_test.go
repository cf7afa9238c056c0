package riptide

import (
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// An idle TLS connection's write and read buffers go to a pool and come back
// without allocating (once the holder exists), sized for the server.
func TestLendWriteBufsAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	s := &Server{WriteBufferSize: 8 << 10}
	s.init()
	c := newConn(s, nil)
	c.lendWriteBufs()
	c.takeWriteBufs()
	allocs := testing.AllocsPerRun(1000, func() {
		c.lendWriteBufs()
		if c.wbuf != nil || c.ctx.resp.body != nil || c.rbuf != nil {
			t.Fatal("buffers kept while lent")
		}
		c.takeWriteBufs()
	})
	if allocs != 0 {
		t.Errorf("%v allocs per lend and take, want 0", allocs)
	}
	if cap(c.wbuf) < 8<<10+1024 || cap(c.ctx.resp.body) < 8<<10 || len(c.wbuf) != 0 || len(c.ctx.resp.body) != 0 {
		t.Errorf("buffers back: wbuf %d/%d, body %d/%d", len(c.wbuf), cap(c.wbuf), len(c.ctx.resp.body), cap(c.ctx.resp.body))
	}
	if len(c.rbuf) != s.cfg.readBuf {
		t.Errorf("read buffer back: %d bytes, want %d", len(c.rbuf), s.cfg.readBuf)
	}
}
