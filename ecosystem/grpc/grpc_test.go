package grpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// testService is grpc's interop TestService, the parts the tests call.
type testService struct {
	testgrpc.UnimplementedTestServiceServer
	cancelled chan struct{} // closed when a FullDuplexCall sees its context cancelled
	seenStop  atomic.Bool
}

// UnaryCall echoes the request payload followed by ResponseSize bytes of
// 'r', returns the status asked for in ResponseStatus, and sends back the
// "x-echo" request metadata as a header and as a trailer.
func (s *testService) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("x-echo")) > 0 {
		v := md.Get("x-echo")[0]
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-echo-header", v))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-echo-trailer", v))
	}
	if st := req.GetResponseStatus(); st != nil && st.Code != 0 {
		return nil, status.Error(codes.Code(st.Code), st.Message)
	}
	body := append(append([]byte(nil), req.GetPayload().GetBody()...), bytes.Repeat([]byte("r"), int(req.GetResponseSize()))...)
	return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: body}}, nil
}

// FullDuplexCall answers every request, in order, with one response per
// ResponseParameters entry: "<request body>/<index>" padded with 'p' to
// the entry's size. A request with ResponseStatus ends the call with that
// status; a request with body "wait" blocks until the call is cancelled.
func (s *testService) FullDuplexCall(stream testgrpc.TestService_FullDuplexCallServer) error {
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if st := req.GetResponseStatus(); st != nil && st.Code != 0 {
			return status.Error(codes.Code(st.Code), st.Message)
		}
		if string(req.GetPayload().GetBody()) == "wait" {
			<-stream.Context().Done()
			if s.seenStop.CompareAndSwap(false, true) {
				close(s.cancelled)
			}
			return stream.Context().Err()
		}
		for i, p := range req.GetResponseParameters() {
			body := []byte(string(req.GetPayload().GetBody()) + "/" + strconv.Itoa(i))
			if pad := int(p.GetSize()) - len(body); pad > 0 {
				body = append(body, bytes.Repeat([]byte("p"), pad)...)
			}
			if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: body}}); err != nil {
				return err
			}
		}
	}
}

// grpcInstance is a grpc.Server served by riptide's compat door.
type grpcInstance struct {
	addr   string
	tls    bool
	svc    *testService
	h2Reqs atomic.Int64 // requests that reached ServeHTTP over HTTP/2
	other  atomic.Int64 // requests that reached it over anything else
}

// startGRPC mounts a grpc.Server through riptide.FromHTTP on a riptide
// server (h2c prior knowledge, or TLS with ALPN h2) on a loopback port.
func startGRPC(t *testing.T, useTLS bool) *grpcInstance {
	t.Helper()
	in := &grpcInstance{tls: useTLS, svc: &testService{cancelled: make(chan struct{})}}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, in.svc)
	// The wrapper proves the RPCs went through riptide's compat door (and
	// not some other transport) and that each was an HTTP/2 request.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			in.h2Reqs.Add(1)
		} else {
			in.other.Add(1)
		}
		gs.ServeHTTP(w, r)
	})
	in.addr = serveH2(t, riptide.FromHTTP(h), useTLS)
	t.Cleanup(gs.Stop)
	return in
}

// client dials in with grpc-go: insecure (h2c prior knowledge) or TLS
// trusting the test certificate.
func (in *grpcInstance) client(t *testing.T) testgrpc.TestServiceClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if in.tls {
		pool := x509.NewCertPool()
		pool.AddCert(testCert(t).leaf)
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	}
	cc, err := grpc.NewClient("passthrough:///"+in.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return testgrpc.NewTestServiceClient(cc)
}

func forEachMode(t *testing.T, f func(t *testing.T, in *grpcInstance)) {
	for _, useTLS := range []bool{false, true} {
		name := "h2c"
		if useTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			in := startGRPC(t, useTLS)
			f(t, in)
			if n, o := in.h2Reqs.Load(), in.other.Load(); n == 0 || o != 0 {
				t.Errorf("ServeHTTP saw %d HTTP/2 requests and %d others, want >0 and 0", n, o)
			}
		})
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGRPCUnary(t *testing.T) {
	forEachMode(t, func(t *testing.T, in *grpcInstance) {
		c := in.client(t)
		ctx := ctxT(t)

		// A small call; over TLS, the peer shows ALPN h2.
		var p peer.Peer
		var hdr, trl metadata.MD
		mctx := metadata.AppendToOutgoingContext(ctx, "x-echo", "riptide")
		resp, err := c.UnaryCall(mctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("hello")}, ResponseSize: 3},
			grpc.Peer(&p), grpc.Header(&hdr), grpc.Trailer(&trl))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.GetPayload().GetBody()); got != "hellorrr" {
			t.Errorf("UnaryCall: payload %q, want %q", got, "hellorrr")
		}
		if got := hdr.Get("x-echo-header"); len(got) != 1 || got[0] != "riptide" {
			t.Errorf("response header x-echo-header = %q, want [riptide]", got)
		}
		if got := trl.Get("x-echo-trailer"); len(got) != 1 || got[0] != "riptide" {
			t.Errorf("response trailer x-echo-trailer = %q, want [riptide]", got)
		}
		if in.tls {
			ti, ok := p.AuthInfo.(credentials.TLSInfo)
			if !ok || ti.State.NegotiatedProtocol != "h2" {
				t.Errorf("peer auth info %#v, want TLS with ALPN h2", p.AuthInfo)
			}
		}

		// Request and response larger than the initial 64 KiB flow-control
		// windows, both ways.
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
		resp, err = c.UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: big}, ResponseSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetPayload().GetBody(); len(got) != 2<<20 || !bytes.Equal(got[:len(big)], big) {
			t.Errorf("large UnaryCall: %d bytes back, want the 1 MiB sent then 1 MiB of 'r'", len(got))
		}

		// A status error (a trailers-only response) reaches the client
		// with its code and message.
		_, err = c.UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseStatus: &testgrpc.EchoStatus{Code: int32(codes.FailedPrecondition), Message: "no: ünïcode"}})
		if st, _ := status.FromError(err); st.Code() != codes.FailedPrecondition || st.Message() != "no: ünïcode" {
			t.Errorf("status error: %v, want FailedPrecondition %q", err, "no: ünïcode")
		}

		// Many concurrent calls multiplexed on the one connection.
		errs := make(chan error, 100)
		for i := range 100 {
			go func() {
				body := []byte("call-" + strconv.Itoa(i))
				r, err := c.UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: body}})
				if err == nil && !bytes.Equal(r.GetPayload().GetBody(), body) {
					err = fmt.Errorf("call %d: got %q", i, r.GetPayload().GetBody())
				}
				errs <- err
			}()
		}
		for range 100 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}

func TestGRPCFullDuplex(t *testing.T) {
	forEachMode(t, func(t *testing.T, in *grpcInstance) {
		c := in.client(t)
		ctx := ctxT(t)

		// Ping-pong: each request is answered before the next is sent,
		// which only works if both directions stream at once.
		s, err := c.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			body := "ping-" + strconv.Itoa(i)
			if err := s.Send(&testgrpc.StreamingOutputCallRequest{
				Payload:            &testgrpc.Payload{Body: []byte(body)},
				ResponseParameters: []*testgrpc.ResponseParameters{{Size: 0}, {Size: 0}},
			}); err != nil {
				t.Fatal(err)
			}
			for j := range 2 {
				r, err := s.Recv()
				if err != nil {
					t.Fatalf("ping %d response %d: %v", i, j, err)
				}
				if got, want := string(r.GetPayload().GetBody()), body+"/"+strconv.Itoa(j); got != want {
					t.Fatalf("ping-pong: got %q, want %q", got, want)
				}
			}
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != io.EOF {
			t.Fatalf("after CloseSend: %v, want io.EOF (status OK)", err)
		}

		// Pipelined: all requests sent first (with large responses, beyond
		// the flow-control windows), then every response read; the order
		// must be the order sent.
		s, err = c.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const n, size = 40, 32 << 10
		sendErr := make(chan error, 1)
		go func() {
			for i := range n {
				if err := s.Send(&testgrpc.StreamingOutputCallRequest{
					Payload:            &testgrpc.Payload{Body: []byte("msg-" + strconv.Itoa(i))},
					ResponseParameters: []*testgrpc.ResponseParameters{{Size: size}},
				}); err != nil {
					sendErr <- err
					return
				}
			}
			sendErr <- s.CloseSend()
		}()
		for i := range n {
			r, err := s.Recv()
			if err != nil {
				t.Fatalf("pipelined response %d: %v", i, err)
			}
			b := r.GetPayload().GetBody()
			want := "msg-" + strconv.Itoa(i) + "/0"
			if len(b) != size || !bytes.HasPrefix(b, []byte(want)) {
				t.Fatalf("pipelined response %d: %d bytes starting %q, want %d starting %q", i, len(b), b[:min(len(b), 12)], size, want)
			}
		}
		if _, err := s.Recv(); err != io.EOF {
			t.Fatalf("end of pipelined stream: %v, want io.EOF", err)
		}
		if err := <-sendErr; err != nil {
			t.Fatal(err)
		}

		// A status error in the middle of a stream ends it with that code.
		s, err = c.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("a")}, ResponseParameters: []*testgrpc.ResponseParameters{{}}})
		if r, err := s.Recv(); err != nil || string(r.GetPayload().GetBody()) != "a/0" {
			t.Fatalf("before the error: %v %v", r, err)
		}
		_ = s.Send(&testgrpc.StreamingOutputCallRequest{ResponseStatus: &testgrpc.EchoStatus{Code: int32(codes.Aborted), Message: "stop"}})
		if _, err := s.Recv(); status.Code(err) != codes.Aborted {
			t.Fatalf("stream error: %v, want Aborted", err)
		}
	})
}

// TestGRPCCancel cancels a streaming call from the client: the RST_STREAM
// must reach the server handler as a cancelled context.
func TestGRPCCancel(t *testing.T) {
	forEachMode(t, func(t *testing.T, in *grpcInstance) {
		c := in.client(t)
		ctx, cancel := context.WithCancel(ctxT(t))
		s, err := c.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("wait")}}); err != nil {
			t.Fatal(err)
		}
		// Make sure the server has the request before cancelling: a unary
		// call on the same connection completes after it was sent.
		if _, err := c.UnaryCall(ctxT(t), &testgrpc.SimpleRequest{}); err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case <-in.svc.cancelled:
		case <-time.After(20 * time.Second):
			t.Fatal("the server handler's context was not cancelled after the client cancelled the call")
		}
		if _, err := s.Recv(); status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
			t.Errorf("client Recv after cancel: %v, want Canceled", err)
		}
		// The connection still serves.
		if _, err := c.UnaryCall(ctxT(t), &testgrpc.SimpleRequest{}); err != nil {
			t.Fatal(err)
		}
	})
}

type certPair struct {
	cert tls.Certificate
	leaf *x509.Certificate
}

// testCert is the test certificate (internal/testcert), made once.
func testCert(t *testing.T) certPair {
	t.Helper()
	c, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	return certPair{cert: c, leaf: c.Leaf}
}
