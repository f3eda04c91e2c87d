package otlp

import (
	"bytes"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A serve process reads the store while a separate collector process ingests into it: no
// query fails (in particular none with "database is locked") and no batch is refused.
func TestAnotherProcessQueriesWhileTheReceiverIngests(t *testing.T) {
	const senders, batches, spans = 3, 20, 100
	path := filepath.Join(t.TempDir(), "telemetry.db")
	_, url := startHelper(t, path)
	reader, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	var wg sync.WaitGroup
	var refused atomic.Int32
	var next atomic.Uint64
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range batches {
				n := next.Add(1)
				resp, err := http.Post(url+TracesPath, ctProto, bytes.NewReader(encodeProto(makeTraces("svc", n, 0, spans))))
				if err != nil {
					refused.Add(1)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					refused.Add(1)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	queries := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		var n int
		var newest int64
		err := reader.DB().QueryRow(`SELECT COUNT(*), COALESCE(MAX(Timestamp), 0) FROM otel_traces
			WHERE ServiceName = 'svc' AND Timestamp > ?`, time.Now().Add(-time.Hour).UnixNano()).Scan(&n, &newest)
		if err != nil {
			t.Fatalf("query while ingesting: %v", err)
		}
		if _, err := reader.HighWater(t.Context()); err != nil {
			t.Fatalf("high-water mark while ingesting: %v", err)
		}
		queries++
	}
	if refused.Load() != 0 {
		t.Errorf("%d batches were not acknowledged", refused.Load())
	}
	if got := countRows(t, reader, "otel_traces"); got != senders*batches*spans {
		t.Errorf("the reader sees %d spans, want %d", got, senders*batches*spans)
	}
	t.Logf("%d queries ran during ingest", queries)
}
