package client

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/riptide-http/riptide/internal/h2"
	"golang.org/x/net/http2/hpack"
)

// TestH2HeaderBlockCache: a connection sends the same request's header
// block again without encoding it (h2Conn.endBlock) only while the fields
// and the encoder's dynamic table are the same: requests that alternate
// between field sets, one adding new fields to the table, and a server's
// SETTINGS_HEADER_TABLE_SIZE that shrinks the table all decode, on the
// server's one decoder, to the fields each request set; the block after
// the shrink starts with the table size update (RFC 7541 §4.2), and a
// request repeated with no change in between is sent as the same bytes.
func TestH2HeaderBlockCache(t *testing.T) {
	type got struct {
		block  []byte
		fields []string
	}
	gots := make(chan got, 16)
	shrink := make(chan struct{})
	s := newH2Raw(t, func(sc *h2RawConn) {
		var fields []string
		dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
			fields = append(fields, f.Name+": "+f.Value)
		})
		for {
			f, err := sc.next(h2.FrameHeaders)
			if err != nil {
				return
			}
			fields = fields[:0]
			if _, err = dec.Write(f.Data); err == nil {
				err = dec.Close() // the block ends
			}
			if err != nil {
				t.Errorf("decoding request %d: %v", f.StreamID, err)
				return
			}
			gots <- got{f.Data, slices.Clone(fields)}
			sc.ok(f.StreamID, "x")
			if f.StreamID == 13 {
				<-shrink
				sc.write(h2.AppendSettings(nil, []h2.Setting{{ID: h2.SettingHeaderTableSize, Val: 0}}))
				dec.SetAllowedMaxDynamicTableSize(0)
				sc.next(h2.FrameSettings) // the client's ACK
				shrink <- struct{}{}
			}
		}
	})
	c := s.client()
	defer c.CloseIdleConnections()
	send := func(seq string) got {
		t.Helper()
		var req Request
		var resp Response
		req.SetURL(s.url("/p"))
		req.AddHeader("X-Seq", seq)
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		g := <-gots
		want := []string{":method: GET", ":scheme: http", ":authority: " + s.addr, ":path: /p", "x-seq: " + seq}
		for _, w := range want {
			if !slices.Contains(g.fields, w) {
				t.Fatalf("request x-seq %s: server decoded %q, missing %q", seq, g.fields, w)
			}
		}
		return g
	}
	var blocks [][]byte
	for i, seq := range []string{"a", "a", "a", "b", "a", "b", "a"} { // streams 1..13
		blocks = append(blocks, send(seq).block)
		if i == 2 && !bytes.Equal(blocks[1], blocks[2]) {
			t.Errorf("same request, same table: block % x, then % x", blocks[1], blocks[2])
		}
	}
	if bytes.Equal(blocks[0], blocks[1]) {
		t.Errorf("first block % x sent again, though it added its fields to the table", blocks[0])
	}
	shrink <- struct{}{}
	<-shrink
	g := send("a")
	if len(g.block) == 0 || g.block[0]&0xe0 != 0x20 {
		t.Errorf("block after SETTINGS_HEADER_TABLE_SIZE 0: % x, want a table size update first", g.block)
	}
	for i := range 3 {
		send(fmt.Sprint("c", i))
	}
}
