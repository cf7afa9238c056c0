package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/client"
	"github.com/riptide-http/riptide/internal/testcert"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// Connect's Go client (connectrpc.com/connect) over riptide's client as
// its http.Client's Transport, to a Connect service served over HTTP/2
// (TLS, ALPN h2) by riptide's server and by net/http's: a unary call, a
// server stream and a bidirectional stream (which needs a full-duplex
// HTTP/2 client: a client that sends the whole request body before
// reading the response hangs in the first Receive), each in the Connect
// and the gRPC protocol. The messages
// are gRPC's interop test messages (generated protobuf code in
// google.golang.org/grpc/interop/grpc_testing), with Connect's default
// protobuf codec.

const connectService = "/grpc.testing.TestService/"

// connectMux is the Connect service: UnaryCall echoes the payload,
// StreamingOutputCall sends one message per ResponseParameters (of its
// size, filled with 'x'), FullDuplexCall answers each message with its
// payload, as it comes.
func connectMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(connectService+"UnaryCall", connect.NewUnaryHandler(connectService+"UnaryCall",
		func(_ context.Context, req *connect.Request[testgrpc.SimpleRequest]) (*connect.Response[testgrpc.SimpleResponse], error) {
			resp := connect.NewResponse(&testgrpc.SimpleResponse{Payload: req.Msg.GetPayload()})
			resp.Header().Set("X-Proto", req.Peer().Protocol+" "+req.Header().Get("X-Proto-Seen"))
			return resp, nil
		}))
	mux.Handle(connectService+"StreamingOutputCall", connect.NewServerStreamHandler(connectService+"StreamingOutputCall",
		func(_ context.Context, req *connect.Request[testgrpc.StreamingOutputCallRequest], s *connect.ServerStream[testgrpc.StreamingOutputCallResponse]) error {
			for _, p := range req.Msg.GetResponseParameters() {
				body := []byte(strings.Repeat("x", int(p.GetSize())))
				if err := s.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: body}}); err != nil {
					return err
				}
			}
			return nil
		}))
	mux.Handle(connectService+"FullDuplexCall", connect.NewBidiStreamHandler(connectService+"FullDuplexCall",
		func(_ context.Context, s *connect.BidiStream[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
			for {
				msg, err := s.Receive()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := s.Send(&testgrpc.StreamingOutputCallResponse{Payload: msg.GetPayload()}); err != nil {
					return err
				}
			}
		}))
	// HTTP/2 is what the handler saw.
	outer := http.NewServeMux()
	outer.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Proto-Seen", r.Proto)
		mux.ServeHTTP(w, r)
	}))
	return outer
}

// connectServers starts the Connect service on riptide's server and on
// net/http's, over TLS with h2, and returns their base URLs.
func connectServers(t *testing.T) map[string]string {
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: riptide.FromHTTP(connectMux()),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewUnstartedServer(connectMux())
	ts.EnableHTTP2 = true
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return map[string]string{"riptide": "https://" + ln.Addr().String(), "net/http": ts.URL}
}

// TestConnectOverClient: Connect's client, with riptide's client as the
// transport, makes unary, server-streaming and bidirectional calls to a
// Connect service over HTTP/2, in the Connect and gRPC protocols.
func TestConnectOverClient(t *testing.T) {
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	for name, base := range connectServers(t) {
		for _, proto := range []string{"connect", "grpc"} {
			t.Run(name+"/"+proto, func(t *testing.T) {
				rc := &client.Client{TLSConfig: &tls.Config{RootCAs: testcert.Pool(cert)}}
				defer rc.CloseIdleConnections()
				hc := &http.Client{Transport: rc}
				var opts []connect.ClientOption
				if proto == "grpc" {
					opts = append(opts, connect.WithGRPC())
				}
				ctx := context.Background()

				unary := connect.NewClient[testgrpc.SimpleRequest, testgrpc.SimpleResponse](hc, base+connectService+"UnaryCall", opts...)
				resp, err := unary.CallUnary(ctx, connect.NewRequest(&testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("unary")}}))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := resp.Header().Get("X-Proto"), proto+" HTTP/2.0"; string(resp.Msg.GetPayload().GetBody()) != "unary" || got != want {
					t.Fatalf("unary: %q, protocol %q, want %q and %q", resp.Msg.GetPayload().GetBody(), got, "unary", want)
				}

				server := connect.NewClient[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse](hc, base+connectService+"StreamingOutputCall", opts...)
				sizes := []int32{1, 100, 70000}
				var params []*testgrpc.ResponseParameters
				for _, n := range sizes {
					params = append(params, &testgrpc.ResponseParameters{Size: n})
				}
				ss, err := server.CallServerStream(ctx, connect.NewRequest(&testgrpc.StreamingOutputCallRequest{ResponseParameters: params}))
				if err != nil {
					t.Fatal(err)
				}
				var got []int32
				for ss.Receive() {
					got = append(got, int32(len(ss.Msg().GetPayload().GetBody())))
				}
				if err := ss.Err(); err != nil || fmt.Sprint(got) != fmt.Sprint(sizes) {
					t.Fatalf("server stream: sizes %v, %v, want %v", got, err, sizes)
				}
				ss.Close()

				bidi := connect.NewClient[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse](hc, base+connectService+"FullDuplexCall", opts...)
				bs := bidi.CallBidiStream(ctx)
				for i := range 3 {
					// Each answer is read before the next message is sent:
					// the request body is still open while the response
					// streams.
					msg := fmt.Sprintf("message %d", i)
					if err := bs.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte(msg)}}); err != nil {
						t.Fatal(err)
					}
					r, err := bs.Receive()
					if err != nil || string(r.GetPayload().GetBody()) != msg {
						t.Fatalf("bidi %d: %q %v, want %q", i, r.GetPayload().GetBody(), err, msg)
					}
				}
				if err := bs.CloseRequest(); err != nil {
					t.Fatal(err)
				}
				if _, err := bs.Receive(); !errors.Is(err, io.EOF) {
					t.Fatalf("bidi end: %v, want io.EOF", err)
				}
				if err := bs.CloseResponse(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
