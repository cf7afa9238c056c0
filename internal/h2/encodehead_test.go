package h2

import (
	"bytes"
	"math"
	"net"
	"strconv"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestEncodeHeadBytes checks encodeHead's shortcuts for :status and
// content-length against the encoder they bypass: for every status code
// and a range of lengths, the header block is byte for byte what an
// hpack.Encoder writes for the same fields, on a fresh connection and
// after the client lowered SETTINGS_HEADER_TABLE_SIZE (the size update
// the encoder then owes must begin the next block), and it decodes to
// the fields.
func TestEncodeHeadBytes(t *testing.T) {
	codes := []int{100, 200, 201, 204, 206, 301, 304, 400, 404, 418, 500, 503}
	lengths := []int64{-1, 0, 7, 13, 99, 1234, 1 << 20, 9876543210, math.MaxInt64}
	for _, tableSize := range []int64{-1, 0, 1024} {
		srv, cli := net.Pipe()
		t.Cleanup(func() { srv.Close(); cli.Close() })
		hc := NewConn(&Config{Handler: nopHandler{}}, srv, nil, nil, nil)
		st := &Stream{hc: hc}
		var ref bytes.Buffer
		enc := hpack.NewEncoder(&ref)
		dec := hpack.NewDecoder(4096, nil)
		for _, code := range codes {
			for _, clen := range lengths {
				if tableSize >= 0 && code == 200 {
					// Lowered before each block of 200: the shortcut
					// must give way to the encoder's update every time.
					_ = hc.applySetting(setting{id: SettingHeaderTableSize, val: uint32(tableSize)})
					enc.SetMaxDynamicTableSizeLimit(uint32(tableSize))
				}
				hc.hbuf.b = hc.hbuf.b[:0]
				ref.Reset()
				st.encodeHead(&Head{Status: code, Fields: []Field{{Name: "x-a", Value: "1"}}, ContentLength: clen})
				want := []hpack.HeaderField{{Name: ":status", Value: strconv.Itoa(code)}, {Name: "x-a", Value: "1"}}
				if clen >= 0 {
					want = append(want, hpack.HeaderField{Name: "content-length", Value: strconv.FormatInt(clen, 10), Sensitive: true})
				}
				for _, f := range want {
					_ = enc.WriteField(f)
				}
				if !bytes.Equal(hc.hbuf.b, ref.Bytes()) {
					t.Fatalf("table size %d, status %d, content-length %d: block %x, the encoder writes %x", tableSize, code, clen, hc.hbuf.b, ref.Bytes())
				}
				got, err := dec.DecodeFull(hc.hbuf.b)
				if err != nil || len(got) != len(want) {
					t.Fatalf("table size %d, status %d, content-length %d: decoded %v, %v; want %v", tableSize, code, clen, got, err, want)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("table size %d, status %d, content-length %d: field %d decoded %v, want %v", tableSize, code, clen, i, got[i], want[i])
					}
				}
			}
		}
	}
}
