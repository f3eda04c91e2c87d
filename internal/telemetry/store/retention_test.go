package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestPruneByAgeKeepsRecentRows(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: time.Hour})
	now := time.Now()
	mustIngest(t, s, makeTraces("old", 1, 2500, now.Add(-3*time.Hour))) // more than one prune batch
	mustIngest(t, s, makeTraces("new", 2, 30, now.Add(-time.Minute)))
	if _, _, err := s.IngestLogs(ctx, makeLogs("old", 7, now.Add(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestLogs(ctx, makeLogs("new", 5, now)); err != nil {
		t.Fatal(err)
	}
	deleted, err := s.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 2507 {
		t.Errorf("Prune deleted %d rows, want 2507", deleted)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spans != 30 || st.Logs != 5 {
		t.Errorf("after pruning: %d spans and %d logs, want 30 and 5", st.Spans, st.Logs)
	}
	var old int
	if err := s.DB().QueryRow("SELECT COUNT(*) FROM otel_traces WHERE ServiceName = 'old'").Scan(&old); err != nil || old != 0 {
		t.Errorf("%d old spans remain (%v)", old, err)
	}
}

func TestPruneBySizeDropsTheOldestUntilUnderTheLimit(t *testing.T) {
	ctx := context.Background()
	const limit = 1 << 20
	s := openTestStore(t, Options{MaxBytes: limit})
	base := time.Now().Add(-time.Hour)
	for b := range 10 {
		mustIngest(t, s, makeTraces("svc", uint64(b), 1000, base.Add(time.Duration(b)*time.Minute)))
	}
	before, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.UsedBytes <= limit {
		t.Fatalf("the fixture holds %d bytes, not more than the %d limit", before.UsedBytes, limit)
	}
	if _, err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.UsedBytes > limit {
		t.Errorf("used %d bytes after pruning, limit %d", after.UsedBytes, limit)
	}
	if after.Spans == 0 || after.Spans >= before.Spans {
		t.Errorf("spans went from %d to %d; want some, not all, pruned", before.Spans, after.Spans)
	}
	if !after.Newest.Equal(before.Newest) || !after.Oldest.After(before.Oldest) {
		t.Errorf("time span went from %v..%v to %v..%v; want the oldest dropped, the newest kept",
			before.Oldest, before.Newest, after.Oldest, after.Newest)
	}
	var pages, free int64
	if err := s.DB().QueryRow("SELECT p.page_count, f.freelist_count FROM pragma_page_count() p, pragma_freelist_count() f").Scan(&pages, &free); err != nil {
		t.Fatal(err)
	}
	if free != 0 || pages*4096 > limit {
		t.Errorf("the file has %d pages, %d of them free; want freed pages returned to the file system", pages, free)
	}
	if after.Integrity != "ok" {
		t.Errorf("integrity %q after pruning", after.Integrity)
	}
}

func TestIngestProceedsWhilePruning(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: time.Hour})
	mustIngest(t, s, makeTraces("old", 1, 8000, time.Now().Add(-5*time.Hour)))
	var wg sync.WaitGroup
	wg.Add(1)
	var pruned int64
	var pruneErr error
	go func() {
		defer wg.Done()
		pruned, pruneErr = s.Prune(ctx)
	}()
	for b := range 10 {
		mustIngest(t, s, makeTraces("new", uint64(100+b), 100, time.Now()))
	}
	wg.Wait()
	if pruneErr != nil || pruned != 8000 {
		t.Fatalf("Prune = %d, %v; want 8000", pruned, pruneErr)
	}
	var n int
	if err := s.DB().QueryRow("SELECT COUNT(*) FROM otel_traces").Scan(&n); err != nil || n != 1000 {
		t.Errorf("%d spans remain (%v), want the 1000 ingested during pruning", n, err)
	}
}

func TestStartRetentionPrunesInTheBackground(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := openTestStore(t, Options{Retention: time.Hour})
	mustIngest(t, s, makeTraces("old", 1, 10, time.Now().Add(-2*time.Hour)))
	s.StartRetention(ctx, time.Hour) // the first pass runs at once
	waitFor(t, func() bool {
		var n int
		_ = s.DB().QueryRow("SELECT COUNT(*) FROM otel_traces").Scan(&n)
		return n == 0
	})
}

func TestStatsOnAnEmptyStore(t *testing.T) {
	s := openTestStore(t, Options{})
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Spans != 0 || st.Logs != 0 || !st.Oldest.IsZero() || !st.Newest.IsZero() || st.Integrity != "ok" {
		t.Errorf("Stats = %+v", st)
	}
	if st.Retention != DefaultRetention || st.MaxBytes != DefaultMaxBytes {
		t.Errorf("defaults not applied: retention %v, max %d", st.Retention, st.MaxBytes)
	}
}

func mustIngest(t *testing.T, s *Store, td ptrace.Traces) {
	t.Helper()
	if _, _, err := s.IngestTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
}
