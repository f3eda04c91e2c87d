package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadersQueryWhileIngestRuns(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	// A second store handle on the same file plays a separate serve process reading.
	other := openTestStore(t, Options{Path: s.Path(), ReadOnly: true})
	const senders, batches, spans = 3, 10, 100
	var wg sync.WaitGroup
	done := make(chan struct{})
	var ingestErr atomic.Value
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if _, _, err := s.IngestTraces(ctx, makeTraces("svc", uint64(g*batches+b), spans, time.Now())); err != nil {
					ingestErr.Store(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	var queries int
	for _, db := range cycle(s.DB(), other.DB()) {
		select {
		case <-done:
		default:
			var n, errs int
			err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(IsError), 0) FROM otel_traces
				WHERE ServiceName = 'svc' AND Timestamp > 0`).Scan(&n, &errs)
			if err != nil {
				t.Fatalf("query during ingest: %v", err)
			}
			queries++
			continue
		}
		break
	}
	if err, _ := ingestErr.Load().(error); err != nil {
		t.Fatalf("ingest during queries: %v", err)
	}
	if queries == 0 {
		t.Fatal("no query ran while ingest was in progress")
	}
	var n int
	if err := other.DB().QueryRow("SELECT COUNT(*) FROM otel_traces").Scan(&n); err != nil || n != senders*batches*spans {
		t.Errorf("counted %d spans (%v), want %d", n, err, senders*batches*spans)
	}
}

// cycle yields a and b alternately, forever (the caller breaks out).
func cycle(a, b *sql.DB) func(func(int, *sql.DB) bool) {
	return func(yield func(int, *sql.DB) bool) {
		for i := 0; ; i++ {
			db := a
			if i%2 == 1 {
				db = b
			}
			if !yield(i, db) {
				return
			}
		}
	}
}

func TestAFailingBatchDoesNotFailTheBatchesSharingItsCommit(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	boom := errors.New("boom")
	// Hold the writer inside a job so the next submissions queue up and share one group.
	release := make(chan struct{})
	started := make(chan struct{})
	holdDone := make(chan error, 1)
	go func() {
		holdDone <- s.writer.submit(ctx, 0, false, func(context.Context, *sql.Tx, *statements, *int64) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	results := make(chan error, 3)
	queued := func(run writeFunc) { go func() { results <- s.writer.submit(ctx, 1, false, run) }() }
	queued(func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error { return boom })
	for i := range 2 {
		td := makeTraces("ok", uint64(i+1), 1, time.Now())
		b := spanArgs(td, s.derive)
		queued(func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error {
			return writeSpans(ctx, tx, st, b, next)
		})
	}
	waitFor(t, func() bool { return len(s.writer.jobs) == 3 })
	close(release)
	if err := <-holdDone; err != nil {
		t.Fatal(err)
	}
	var failed, ok int
	for range 3 {
		if err := <-results; errors.Is(err, boom) {
			failed++
		} else if err == nil {
			ok++
		} else {
			t.Errorf("unexpected error %v", err)
		}
	}
	if failed != 1 || ok != 2 {
		t.Errorf("%d failed and %d succeeded, want 1 and 2", failed, ok)
	}
	var n int
	if err := s.DB().QueryRow("SELECT COUNT(*) FROM otel_traces").Scan(&n); err != nil || n != 2 {
		t.Errorf("stored %d spans (%v), want the 2 good ones", n, err)
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached before the deadline")
		}
		time.Sleep(time.Millisecond)
	}
}
