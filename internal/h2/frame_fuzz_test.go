package h2

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"golang.org/x/net/http2"
)

// FuzzFrameReader reads its input as a client's frames (after the
// preface), the socket's reads being chunk bytes at most, and checks the
// engine's frame reader against golang.org/x/net/http2's Framer, which
// the engine used before it read frames itself (only this test imports
// it): the same frames with the same fields, and the same answer to a
// malformed one (a connection or a stream error with the same code), and
// the same verdict on each setting's bounds (checked, as before, as the
// settings are applied: the same function here as there), but
// for what the engine decides differently on purpose:
//   - a PADDED DATA or HEADERS frame too short for its Pad Length or
//     priority fields is a FRAME_SIZE_ERROR (RFC 9113 §4.2); the Framer
//     returned io.ErrUnexpectedEOF, which the engine took as the client
//     gone;
//   - HEADERS padding past the payload is a connection error, as the
//     engine always answered it (§6.2 refers to §6.1's), where the
//     Framer returns a stream error;
//   - a PUSH_PROMISE from a client is a connection error (§8.4) whatever
//     it holds, as the engine answered every one the Framer returned;
func FuzzFrameReader(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzFrameReader.
	f.Fuzz(func(t *testing.T, chunk uint16, wire []byte) {
		var br h2ReadBuf
		br.init(&chunkReader{data: wire, sizes: []int{int(chunk)%(20<<10) + 1}})
		fr := frameReader{r: &br, max: 16 << 10}
		xf := http2.NewFramer(nil, bytes.NewReader(wire))
		xf.SetMaxReadFrameSize(16 << 10)
		for i := 0; ; i++ {
			var f frame
			err := fr.readFrame(&f)
			xfr, xerr := xf.ReadFrame()
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				if xerr != err {
					t.Fatalf("frame %d: %v; x/net: %v", i, err, xerr)
				}
				return
			}
			if f.Type == FramePushPromise && err == connError(ErrCodeProtocol) {
				return
			}
			if err != nil && xerr != nil {
				if !sameError(f.FrameHeader, err, xerr) {
					t.Fatalf("frame %d (%+v): %v; x/net: %v", i, f.FrameHeader, err, xerr)
				}
				if _, ok := err.(streamError); ok {
					continue
				}
				return
			}
			if xerr != nil {
				t.Fatalf("frame %d (%+v): read; x/net: %v", i, f.FrameHeader, xerr)
			}
			if err != nil {
				t.Fatalf("frame %d (%+v): %v; x/net read %v", i, f.FrameHeader, err, xfr)
			}
			if msg := sameFrame(&f, xfr); msg != "" {
				t.Fatalf("frame %d: %s\n engine %+v\n x/net  %+v", i, msg, f, xfr)
			}
		}
	})
}

// sameError reports whether the engine's error for the frame fh matches
// x/net's, or differs as FuzzFrameReader allows.
func sameError(fh FrameHeader, err, xerr error) bool {
	switch err := err.(type) {
	case connError:
		if xerr == http2.ErrFrameTooLarge {
			return ErrCode(err) == ErrCodeFrameSize
		}
		var xce http2.ConnectionError
		if errors.As(xerr, &xce) {
			return ErrCode(err) == ErrCode(xce)
		}
		var xse http2.StreamError
		if errors.As(xerr, &xse) {
			return fh.Type == FrameHeaders && ErrCode(err) == ErrCodeProtocol && ErrCode(xse.Code) == ErrCodeProtocol
		}
		return xerr == io.ErrUnexpectedEOF && ErrCode(err) == ErrCodeFrameSize && (fh.Type == FrameData || fh.Type == FrameHeaders)
	case streamError:
		var xse http2.StreamError
		return errors.As(xerr, &xse) && xse.StreamID == err.id && ErrCode(xse.Code) == err.code
	}
	return false
}

// sameFrame compares a frame the engine read with x/net's, and says how
// they differ ("" if they do not).
func sameFrame(f *frame, xf http2.Frame) string {
	xh := xf.Header()
	if f.FrameHeader != (FrameHeader{Length: xh.Length, Type: FrameType(xh.Type), Flags: Flags(xh.Flags), StreamID: xh.StreamID}) {
		return "headers differ"
	}
	same := func(ok bool) string {
		if ok {
			return ""
		}
		return "fields differ"
	}
	prio := func(p http2.PriorityParam) bool {
		return f.dep == p.StreamDep && f.exclusive == p.Exclusive && f.weight == p.Weight
	}
	switch xf := xf.(type) {
	case *http2.DataFrame:
		return same(bytes.Equal(f.data, xf.Data()) && f.endStream == xf.StreamEnded())
	case *http2.HeadersFrame:
		return same(bytes.Equal(f.data, xf.HeaderBlockFragment()) && f.endStream == xf.StreamEnded() &&
			f.hasPriority == xf.HasPriority() && prio(xf.Priority))
	case *http2.PriorityFrame:
		return same(f.hasPriority && prio(xf.PriorityParam))
	case *http2.RSTStreamFrame:
		return same(f.code == ErrCode(xf.ErrCode))
	case *http2.SettingsFrame:
		if f.ack != xf.IsAck() || f.numSettings() != xf.NumSettings() {
			return "settings differ"
		}
		for i := range f.numSettings() {
			s, xs := f.setting(i), xf.Setting(i)
			if s.id != SettingID(xs.ID) || s.val != xs.Val {
				return "settings differ"
			}
			if err, xerr := s.valid(), xs.Valid(); err != nil || xerr != nil {
				if ce, ok := err.(connError); !ok || xerr != error(http2.ConnectionError(ce)) {
					return "settings' bounds differ"
				}
			}
		}
		return ""
	case *http2.PingFrame:
		return same(f.ack == xf.IsAck() && f.ping == xf.Data)
	case *http2.GoAwayFrame:
		return same(f.n == xf.LastStreamID && f.code == ErrCode(xf.ErrCode) && bytes.Equal(f.data, xf.DebugData()))
	case *http2.WindowUpdateFrame:
		return same(f.n == xf.Increment)
	case *http2.ContinuationFrame:
		return same(bytes.Equal(f.data, xf.HeaderBlockFragment()))
	case *http2.PriorityUpdateFrame:
		return same(f.n == xf.PrioritizedStreamID && string(f.data) == xf.Priority)
	case *http2.UnknownFrame:
		return same(bytes.Equal(f.data, xf.Payload()))
	}
	return "x/net read a frame of another kind"
}

// loopReader reads wire over and over.
type loopReader struct {
	wire []byte
	off  int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := copy(p, r.wire[r.off:])
	r.off = (r.off + n) % len(r.wire)
	return n, nil
}

// BenchmarkFrameReader reads a client's typical frames (a request's
// HEADERS, body DATA small and full-sized, WINDOW_UPDATE, PING, SETTINGS
// ACK) through the connection's read buffer: with the engine's reader,
// and with x/net's Framer as the engine used it before (frame headers and
// header-block payloads read by the engine, other frames by
// ReadFrameForHeader with reused DATA frames).
//
//	go test -run '^$' -bench BenchmarkFrameReader -benchmem ./internal/h2/
func BenchmarkFrameReader(b *testing.B) {
	wire := rawSeq(
		rawFrameN(1, 0x4, 1, 40),
		rawFrameN(0, 0, 1, 1<<10),
		rawFrameN(0, 0x1, 1, 16<<10),
		rawFrame(8, 0, 0, 0, 1, 0, 0),
		rawFrameN(6, 0, 0, 8),
		rawFrame(4, 0x1, 0),
	)
	const frames = 6
	b.Run("engine", func(b *testing.B) {
		var br h2ReadBuf
		br.init(&loopReader{wire: wire})
		fr := frameReader{r: &br, max: 16 << 10}
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			for range frames {
				var f frame
				if err := fr.readFrame(&f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("x-net", func(b *testing.B) {
		var br h2ReadBuf
		br.init(&loopReader{wire: wire})
		xf := http2.NewFramer(nil, &br)
		xf.SetReuseFrames()
		xf.SetMaxReadFrameSize(16 << 10)
		hpayload := make([]byte, 1<<10)
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			for range frames {
				fh, err := xf.ReadFrameHeader()
				if err != nil {
					b.Fatal(err)
				}
				if fh.Type == http2.FrameHeaders {
					if _, err := io.ReadFull(&br, hpayload[:fh.Length]); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if _, err := xf.ReadFrameForHeader(fh); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
