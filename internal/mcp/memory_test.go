package mcp

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields n bytes of 'x' and then tail, without ever holding the long part.
type repeatReader struct {
	n    int
	tail *strings.Reader
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return r.tail.Read(p)
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func TestAHugeLineKeepsMemoryBounded(t *testing.T) {
	const lineBytes = 64 << 20
	const budget = 8 << 20 // the 1 MiB ceiling, the read window, and slack
	in := &repeatReader{n: lineBytes, tail: strings.NewReader("\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")}
	var out bytes.Buffer
	srv := NewServer(newFakeHandler(), testOptions())

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := srv.Serve(context.Background(), in, &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	runtime.ReadMemStats(&after)

	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB line cost %d bytes of allocation in total", lineBytes>>20, allocated)
	if allocated > budget {
		t.Errorf("serving a %d MiB line allocated %d bytes, want at most %d", lineBytes>>20, allocated, budget)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: message exceeds the 1048576-byte limit and was discarded","data":{"maxBytes":1048576}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}
