package grpc

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/router"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestGRPCMountedOnRouter mounts a grpc.Server on the native router at its
// service's name with router.MountKeepPath (the path kept whole, as gRPC
// reads the method from it), next to a native route, over h2c and TLS.
// The same server mounted with Mount (the prefix stripped) is answered
// with gRPC's "malformed method name", the rule docs/router.md states.
func TestGRPCMountedOnRouter(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "h2c"
		if useTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			gs := grpc.NewServer()
			testgrpc.RegisterTestServiceServer(gs, &testService{cancelled: make(chan struct{})})
			r := router.New()
			r.MountKeepPath("/grpc.testing.TestService", gs)
			r.Mount("/stripped", gs)
			addr := serveH2(t, r, useTLS)
			t.Cleanup(gs.Stop)

			creds := insecure.NewCredentials()
			if useTLS {
				pool := x509.NewCertPool()
				pool.AddCert(testCert(t).leaf)
				creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
			}
			cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cc.Close() })
			ctx := ctxT(t)

			resp, err := testgrpc.NewTestServiceClient(cc).UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("mounted")}, ResponseSize: 2})
			if err != nil {
				t.Fatalf("UnaryCall through MountKeepPath: %v", err)
			}
			if got := string(resp.GetPayload().GetBody()); got != "mountedrr" {
				t.Errorf("UnaryCall through MountKeepPath: %q, want %q", got, "mountedrr")
			}

			// Under Mount the server sees "/UnaryCall" for
			// "/stripped/UnaryCall".
			err = cc.Invoke(ctx, "/stripped/UnaryCall", &testgrpc.SimpleRequest{}, &testgrpc.SimpleResponse{})
			if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "malformed method name") {
				t.Errorf("a call through Mount: %v, want Unimplemented with gRPC's malformed method name", err)
			}
		})
	}
}

// serveH2 serves h on a loopback port, h2c prior knowledge or TLS with
// ALPN h2, and returns its address.
func serveH2(t *testing.T, h riptide.Handler, useTLS bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: h, HTTP2: &riptide.HTTP2Config{H2C: true}, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if useTLS {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{testCert(t).cert}, NextProtos: []string{"h2"}}
			_ = srv.ServeTLS(ln, "", "")
		} else {
			_ = srv.Serve(ln)
		}
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return ln.Addr().String()
}
