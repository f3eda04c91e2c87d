package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// benchServe starts a server with one cheap tool and returns the client ends of its pipes.
func benchServe(b *testing.B) (*io.PipeWriter, *bufio.Reader) {
	b.Helper()
	h := oneTool(func(context.Context, CallRequest) (CallResult, error) {
		return CallResult{Structured: json.RawMessage(`{"count":3,"docs":[{"slug":"a","title":"A"},{"slug":"b","title":"B"}]}`)}, nil
	})
	in, feed := io.Pipe()
	outR, out := io.Pipe()
	go NewServer(h, testOptions()).Serve(context.Background(), in, out)
	b.Cleanup(func() { feed.Close(); outR.Close() })
	r := bufio.NewReader(outR)
	io.WriteString(feed, initLine+"\n")
	if _, err := r.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	return feed, r
}

// BenchmarkCallRoundTrip is B2's shape: one tools/call at a time, waiting for each answer.
func BenchmarkCallRoundTrip(b *testing.B) {
	feed, r := benchServe(b)
	for i := 0; b.Loop(); i++ {
		fmt.Fprintf(feed, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{"limit":2}}}`+"\n", i+1)
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallPipelined is B3's shape: 64 calls kept in flight.
func BenchmarkCallPipelined(b *testing.B) {
	const depth = 64
	feed, r := benchServe(b)
	sent := make(chan struct{}, depth)
	done := make(chan error, 1)
	n := b.N
	go func() {
		for range n {
			if _, err := r.ReadBytes('\n'); err != nil {
				done <- err
				return
			}
			<-sent
		}
		done <- nil
	}()
	b.ResetTimer()
	for i := range n {
		sent <- struct{}{}
		fmt.Fprintf(feed, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{"limit":2}}}`+"\n", i+1)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "calls/s")
}
