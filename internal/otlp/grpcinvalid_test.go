package otlp

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A message that does not decode is the sender's to fix: INVALID_ARGUMENT, as the OTLP
// specification asks for bad data (grpc-go's own answer to a message its codec cannot read is
// INTERNAL, which exporters may retry for ever), saying what is wrong; nothing is stored and
// the receiver keeps serving.
func TestGRPCReceiverAnswersInvalidArgumentForUndecodableMessages(t *testing.T) {
	_, st := startReceiver(t, Options{})
	addr, _ := serveGRPC(t, st, Options{})
	// rawCodec (bench_test.go) sends the bytes as given.
	cc := dialGRPC(t, addr, grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	tooDeep, _, err := deepAttributes[0].encode(maxValueDepth+1, "arrays")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method string
		msg          []byte
		wantMessage  string
	}{
		{"garbage traces", grpcTraces, []byte{0x0a, 0xff, 0xff, 0xff}, "undecodable"},
		{"garbage logs", grpcLogs, []byte("not a protobuf message"), "undecodable"},
		{"garbage metrics", grpcMetrics, []byte{0xff}, "undecodable"},
		{"traces nested past the limit", grpcTraces, tooDeep, "recursion depth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var resp []byte
			err := cc.Invoke(ctx, c.method, &c.msg, &resp)
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), c.wantMessage) {
				t.Errorf("status %v %q, want INVALID_ARGUMENT mentioning %q", st.Code(), st.Message(), c.wantMessage)
			}
			if retryInfo(err) != nil {
				t.Errorf("a bad message carries RetryInfo, so exporters would send it again")
			}
		})
	}
	if n := countRows(t, st, "otel_traces") + countRows(t, st, "otel_logs"); n != 0 {
		t.Errorf("stored %d rows of undecodable messages", n)
	}
	if _, err := exportTraces(t, dialGRPC(t, addr), makeTraces("a", 1, 0, 3)); err != nil {
		t.Fatalf("a good export after the bad ones: %v", err)
	}
}
