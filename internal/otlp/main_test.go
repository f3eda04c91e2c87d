package otlp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/runlens/runlens/internal/gcpolicy"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// The embedded store is the receiver's production sink.
var _ Sink = (*store.Store)(nil)

// helperStoreEnv makes the test binary act as a receiver process serving the store at its
// value (see TestMain): the durability test kills and restarts it.
const helperStoreEnv = "RUNLENS_OTLP_HELPER_STORE"

// helperProfileEnv, when set for a benchmark run, makes the receiver process write a CPU
// profile of itself to that file: the write path's costs, without the senders'.
const helperProfileEnv = "RUNLENS_BENCH_RECEIVER_CPUPROFILE"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperStoreEnv); path != "" {
		os.Exit(serveHelper(path))
	}
	os.Exit(m.Run())
}

// serveHelper serves a receiver on two loopback ports into the store at path, with the GC
// targets of runlens collect, printing "ADDR host:port" (OTLP/HTTP) and "GRPC host:port"
// (OTLP/gRPC) once both accept connections, until SIGTERM (or SIGKILL).
func serveHelper(path string) int {
	gcpolicy.Ingest() // the GC targets of runlens collect, whose receiver this process stands for
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if prof := os.Getenv(helperProfileEnv); prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	st, err := store.Open(ctx, store.Options{Path: path})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open store:", err)
		return 1
	}
	defer st.Close()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	gln, err := Listen("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	srv := NewServer(NewHandler(st, Options{}))
	gsrv := NewGRPCServer(st, Options{})
	go func() {
		<-ctx.Done()
		srv.Close()
		gsrv.Stop()
	}()
	go gsrv.Serve(gln) //nolint:errcheck // ends when stopped
	fmt.Printf("GRPC %s\nADDR %s\n", gln.Addr(), ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// startReceiver serves a receiver into a fresh store on 127.0.0.1:0 and returns its base URL
// and the store, both closed when the test ends.
func startReceiver(t testing.TB, o Options) (string, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(t.TempDir(), "telemetry.db")})
	if err != nil {
		t.Fatal(err)
	}
	return serveSink(t, st, o), st
}

// serveSink serves a receiver into sink and returns its base URL.
func serveSink(t testing.TB, sink Sink, o Options) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(NewHandler(sink, o))
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() {
		srv.Close()
		if c, ok := sink.(io.Closer); ok {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// serveGRPC serves the gRPC receiver into sink on 127.0.0.1:0 and returns its address and
// listener, both closed when the test ends.
func serveGRPC(t testing.TB, sink Sink, o Options) (string, *limitListener) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewGRPCServer(sink, o)
	go srv.Serve(ln) //nolint:errcheck // ends when stopped at cleanup
	t.Cleanup(func() {
		srv.Stop()
		if c, ok := sink.(io.Closer); ok {
			c.Close()
		}
	})
	return ln.Addr().String(), ln.(*limitListener)
}

// dialGRPC opens a client connection to addr with the given options, closed when the test ends.
func dialGRPC(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// post sends body to url with the given headers and returns the status, the response body and
// its content type.
func post(t testing.TB, url, contentType, contentEncoding string, body []byte) (int, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if contentEncoding != "" {
		req.Header.Set("Content-Encoding", contentEncoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// testTraceID returns a distinct non-zero trace id for n.
func testTraceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], 0x0af7651916cd43dd)
	binary.BigEndian.PutUint64(id[8:], n+1)
	return id
}

// testSpanID returns a distinct non-zero span id for n.
func testSpanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], 0xb7ad6b7100000000|(n+1))
	return id
}

// makeTraces builds n spans of service, all in trace traceN, with span ids from firstSpan on.
func makeTraces(service string, traceN, firstSpan uint64, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(testTraceID(traceN))
		sp.SetSpanID(testSpanID(firstSpan + uint64(i)))
		sp.SetName("work")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		sp.Attributes().PutStr("http.request.method", "GET")
	}
	return td
}

func protoTraces(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeProto is protoTraces for goroutines other than the test's, which must not call
// t.Fatal; pdata's protobuf marshaler has no failure path.
func encodeProto(td ptrace.Traces) []byte {
	b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return b
}

// countRows counts the rows of table (otel_traces or otel_logs) in st.
func countRows(t testing.TB, st *store.Store, table string) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// openReadOnly opens the store at path for reading, as a separate serve process would.
func openReadOnly(path string) (*store.Store, error) {
	return store.Open(context.Background(), store.Options{Path: path, ReadOnly: true})
}
