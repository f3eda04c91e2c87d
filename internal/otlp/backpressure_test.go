package otlp

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// Senders faster than the disk: another connection holds SQLite's write lock, so the store's
// writer cannot commit and batches pile up behind it. Past the store's pending-bytes budget,
// HTTP senders are answered 429 with Retry-After and gRPC senders UNAVAILABLE with RetryInfo,
// at once rather than queued in memory; once the disk moves again the senders are served, and
// every acknowledged batch is in the store, whole, and no refused one is.
func TestReceiversPushBackWhenTheDiskFallsBehind(t *testing.T) {
	const spans, sendersPerProtocol = 20, 2
	path := filepath.Join(t.TempDir(), "telemetry.db")
	st, err := store.Open(context.Background(), store.Options{Path: path, MaxPendingBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	url := serveSink(t, st, Options{})
	addr, _ := serveGRPC(t, st, Options{})

	lock := holdWriteLock(t, path)

	var (
		next             atomic.Uint64
		mu               sync.Mutex
		acked            []uint64
		busyHTTP, busyRP atomic.Int32
		stop             = make(chan struct{})
		wg               sync.WaitGroup
	)
	record := func(n uint64) {
		mu.Lock()
		acked = append(acked, n)
		mu.Unlock()
	}
	for range sendersPerProtocol {
		wg.Add(2)
		go func() { // OTLP/HTTP
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := next.Add(1)
				resp, err := http.Post(url+TracesPath, ctProto, bytes.NewReader(encodeProto(makeTraces("pushed", n, 0, spans))))
				if err != nil {
					t.Errorf("HTTP export: %v", err)
					return
				}
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusOK:
					record(n)
				case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
					busyHTTP.Add(1)
				default:
					t.Errorf("HTTP export: status %d", resp.StatusCode)
					return
				}
			}
		}()
		cc := dialGRPC(t, addr)
		go func() { // OTLP/gRPC
			defer wg.Done()
			client := ptraceotlp.NewGRPCClient(cc)
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := next.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(makeTraces("pushed", n, 0, spans)))
				cancel()
				switch {
				case err == nil:
					record(n)
				case status.Code(err) == codes.Unavailable && retryInfo(err) != nil:
					busyRP.Add(1)
				default:
					t.Errorf("gRPC export: %v", err)
					return
				}
			}
		}()
	}
	waitFor(t, 30*time.Second, "both protocols to be pushed back", func() bool { return busyHTTP.Load() > 0 && busyRP.Load() > 0 })
	lock.release()
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	waitFor(t, 30*time.Second, "exports to be acknowledged again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= before+2*sendersPerProtocol
	})
	close(stop)
	wg.Wait()
	t.Logf("%d batches acknowledged; %d refused over HTTP, %d over gRPC", len(acked), busyHTTP.Load(), busyRP.Load())

	for _, n := range acked {
		var count int
		if err := st.DB().QueryRow("SELECT COUNT(*) FROM otel_traces WHERE TraceId = ?", testTraceID(n).String()).Scan(&count); err != nil {
			t.Fatal(err)
		}
		if count != spans {
			t.Errorf("acknowledged batch %d has %d of its %d spans", n, count, spans)
		}
	}
	if total := countRows(t, st, "otel_traces"); total != len(acked)*spans {
		t.Errorf("the store holds %d spans, want exactly the %d acknowledged", total, len(acked)*spans)
	}
}

// writeLock holds SQLite's write lock on a store file from a connection of its own.
type writeLock struct {
	db   *sql.DB
	conn *sql.Conn
	once sync.Once
}

func holdWriteLock(t *testing.T, path string) *writeLock {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	l := &writeLock{db: db, conn: conn}
	t.Cleanup(l.release)
	return l
}

func (l *writeLock) release() {
	l.once.Do(func() {
		_, _ = l.conn.ExecContext(context.Background(), "ROLLBACK")
		l.conn.Close()
		l.db.Close()
	})
}
