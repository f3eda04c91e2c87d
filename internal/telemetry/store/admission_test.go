package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"
)

// stallWriter occupies the writer goroutine, as a disk that has stopped answering does, until
// the returned function is called.
func stallWriter(t *testing.T, s *Store) (resume func()) {
	t.Helper()
	started, unblock := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.writer.submit(context.Background(), 0, true, func(context.Context, *sql.Tx, *statements, *int64) error {
			close(started)
			<-unblock
			return nil
		})
	}()
	<-started
	var resumed bool
	resume = func() {
		if resumed {
			return
		}
		resumed = true
		close(unblock)
		if err := <-done; err != nil {
			t.Errorf("the stalling job: %v", err)
		}
	}
	t.Cleanup(resume)
	return resume
}

// A stream of batches faster than the disk: once the batches waiting for the writer hold the
// pending-bytes budget, the next one is refused with ErrBusy (carrying a retry delay) instead of
// queueing, nothing of it is stored, every admitted batch is stored once the writer moves
// again, and the refused batch goes in when sent again.
func TestIngestRefusesBatchesPastThePendingBudgetAndLosesNoAdmittedOne(t *testing.T) {
	s := openTestStore(t, Options{MaxPendingBytes: 1}) // the first waiting batch fills it
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	resume := stallWriter(t, s)

	admitted := make(chan error, 1)
	go func() {
		_, _, err := s.IngestTraces(ctx, makeTraces("batch1", 1, 10, start))
		admitted <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.admission.pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first batch was never admitted")
		}
		time.Sleep(time.Millisecond)
	}

	began := time.Now()
	_, _, err := s.IngestTraces(ctx, makeTraces("batch2", 2, 10, start))
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a batch past the budget: err %v, want ErrBusy", err)
	}
	if waited := time.Since(began); waited < admitWait/2 || waited > 5*admitWait {
		t.Errorf("refused after %s, want about %s", waited, admitWait)
	}
	var hint interface{ RetryAfter() time.Duration }
	if !errors.As(err, &hint) || hint.RetryAfter() <= 0 {
		t.Errorf("ErrBusy carries no retry delay: %v", err)
	}
	if _, _, err := s.IngestLogs(ctx, makeLogs("svc", 5, start)); !errors.Is(err, ErrBusy) {
		t.Errorf("logs past the budget: err %v, want ErrBusy", err)
	}

	resume()
	if err := <-admitted; err != nil {
		t.Fatalf("the admitted batch: %v", err)
	}
	if n := s.admission.pending(); n != 0 {
		t.Errorf("%d bytes still pending after every batch was answered", n)
	}
	if got := countSpans(t, s, 1); got != 10 {
		t.Errorf("the admitted batch has %d of its 10 spans", got)
	}
	if got := countSpans(t, s, 2); got != 0 {
		t.Errorf("the refused batch left %d spans", got)
	}
	if _, _, err := s.IngestTraces(ctx, makeTraces("batch2", 2, 10, start)); err != nil {
		t.Fatalf("the refused batch sent again: %v", err)
	}
	if got := countSpans(t, s, 2); got != 10 {
		t.Errorf("the batch sent again has %d of its 10 spans", got)
	}
}

// A batch larger than the whole budget is admitted when nothing else waits, so no batch is
// refused forever.
func TestIngestAdmitsABatchLargerThanTheBudgetAlone(t *testing.T) {
	s := openTestStore(t, Options{MaxPendingBytes: 1})
	if _, _, err := s.IngestTraces(context.Background(), makeTraces("batch1", 1, 50, time.Now())); err != nil {
		t.Fatalf("a lone batch over the budget: %v", err)
	}
	if got := countSpans(t, s, 1); got != 50 {
		t.Errorf("stored %d of its 50 spans", got)
	}
}

// A sender that gives up while its batch waits for room is answered with its own context's
// error, and nothing is stored.
func TestIngestWaitingForRoomEndsWithTheSendersContext(t *testing.T) {
	s := openTestStore(t, Options{MaxPendingBytes: 1})
	start := time.Now()
	stallWriter(t, s)
	go func() { _, _, _ = s.IngestTraces(context.Background(), makeTraces("batch1", 1, 5, start)) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.admission.pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first batch was never admitted")
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.IngestTraces(ctx, makeTraces("batch2", 2, 5, start)); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// countSpans counts the spans of batch n, sent as service batchN.
func countSpans(t *testing.T, s *Store, n int) int {
	t.Helper()
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM otel_traces WHERE ServiceName = ?`, fmt.Sprintf("batch%d", n)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
