package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Admission bounds what waits for the writer. A sender faster than the disk would otherwise
// pile decoded batches up in memory until the process runs out of it; past the bound a batch
// is refused at once with ErrBusy, before anything of it is queued, so the sender keeps it and
// retries later, and nothing it was told is stored can be lost.
const (
	// DefaultMaxPendingBytes bounds the batches admitted but not yet committed, by the size
	// of their insert arguments (an estimate of the memory they hold).
	DefaultMaxPendingBytes int64 = 128 << 20
	// admitWait is how long a batch may wait for room before it is refused: long enough to
	// ride out one slow commit, short enough that the sender hears "retry later" well inside
	// its export timeout (10 s by default in the OpenTelemetry SDKs).
	admitWait = time.Second
	// retryAfter is the pause ErrBusy asks senders to take.
	retryAfter = time.Second
)

// ErrBusy is returned by IngestTraces and IngestLogs when the batches waiting for the writer
// already hold Options.MaxPendingBytes: nothing of the batch was stored, and the sender should
// retry after ErrBusy's RetryAfter.
var ErrBusy error = busyError{}

type busyError struct{}

func (busyError) Error() string {
	return "telemetry store busy: batches arrive faster than they can be written"
}

// RetryAfter is how long a sender should wait before sending the batch again; the receiver
// turns it into Retry-After (HTTP) and RetryInfo (gRPC).
func (busyError) RetryAfter() time.Duration { return retryAfter }

// admission is a semaphore over pending bytes.
type admission struct {
	mu    sync.Mutex
	limit int64
	used  int64
	// freed is closed, and replaced, whenever bytes are released, waking every waiter.
	freed chan struct{}
}

func newAdmission(limit int64) *admission {
	if limit <= 0 {
		limit = DefaultMaxPendingBytes
	}
	return &admission{limit: limit, freed: make(chan struct{})}
}

// admit reserves n bytes, waiting up to admitWait for room, and returns the function that
// gives them back. A batch larger than the whole limit is admitted when nothing else is
// pending, so that no batch is refused forever.
func (a *admission) admit(ctx context.Context, n int64) (release func(), err error) {
	timer := time.NewTimer(admitWait)
	defer timer.Stop()
	for {
		a.mu.Lock()
		if a.used == 0 || a.used+n <= a.limit {
			a.used += n
			a.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { a.release(n) }) }, nil
		}
		freed := a.freed
		a.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return nil, ErrBusy
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the writer: %w", ctx.Err())
		}
	}
}

func (a *admission) release(n int64) {
	a.mu.Lock()
	a.used -= n
	close(a.freed)
	a.freed = make(chan struct{})
	a.mu.Unlock()
}

// pending returns the bytes admitted and not yet released.
func (a *admission) pending() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// argBytes estimates the memory held by insert arguments: a word pair per value plus the
// bytes of its text. Text shared between rows (a resource's attributes) is counted once per
// row, so the estimate errs high.
func argBytes(args []any) int64 {
	n := int64(16 * len(args))
	for _, v := range args {
		switch v := v.(type) {
		case string:
			n += int64(len(v))
		case []byte:
			n += int64(len(v))
		}
	}
	return n
}

// spanBatchBytes is argBytes over every shape of a span batch, plus its per-span metadata.
func spanBatchBytes(b *spanBatch) int64 {
	var n int64
	for _, args := range b.args {
		n += argBytes(args)
	}
	for _, r := range b.resources.list {
		n += int64(len(r.attrs) + len(r.scopeName) + len(r.scopeVersion))
	}
	return n + int64(len(b.recs))*512 // each span's row, attributes and derived columns in memory
}

// submitAdmitted admits n bytes and then submits run to the writer, releasing the bytes once
// the writer has answered.
func (s *Store) submitAdmitted(ctx context.Context, n int64, rows int, inserts []insertKey, run writeFunc) error {
	release, err := s.admission.admit(ctx, n)
	if err != nil {
		return err
	}
	defer release()
	return s.writer.submitInserts(ctx, rows, inserts, run)
}
