package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

func TestNthSmallestIsTheSortedElement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.Int64Range(0, 50), 1, 300).Draw(t, "xs")
		k := rapid.IntRange(0, len(xs)-1).Draw(t, "k")
		sorted := slices.Sorted(slices.Values(xs))
		if got := nthSmallest(slices.Clone(xs), k); got != sorted[k] {
			t.Fatalf("nthSmallest(%v, %d) = %d, want %d", xs, k, got, sorted[k])
		}
	})
}

func TestMergeSortedMergesSortedLists(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lists := rapid.SliceOfN(rapid.SliceOf(rapid.Int64Range(-5, 1000)), 0, 8).Draw(t, "lists")
		var all []int64
		for _, l := range lists {
			slices.Sort(l)
			all = append(all, l...)
		}
		slices.Sort(all)
		if got := mergeSorted(lists, len(all)); !slices.Equal(got, all) && len(all) > 0 {
			t.Fatalf("mergeSorted = %v, want %v", got, all)
		}
	})
}

func TestParseOperationsRefusesAmbiguousText(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		n    int
		ok   bool
	}{
		{"two records of two operations", "a\x1f5\x1f0\x1eb\x1f7\x1f1", 2, true},
		{"an empty name", "\x1f3\x1f0", 1, true},
		{"nothing", "", 0, true},
		{"a record separator inside a name adds a record", "a\x1eb\x1f5\x1f0", 1, false},
		{"a field separator inside a name breaks the fields", "a\x1fb\x1f5\x1f0", 1, false},
		{"a name with both that parses as two records", "x\x1f1\x1f0\x1ey\x1f5\x1f0", 1, false},
		{"an error flag that is not 0 or 1", "a\x1f5\x1f2", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseOperations(c.text, c.n)
			if (err == nil) != c.ok {
				t.Fatalf("parseOperations(%q, %d) error = %v, want ok %v", c.text, c.n, err, c.ok)
			}
		})
	}
}

func TestSpanNamesHoldingSeparatorsAreStillMeasuredExactly(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "odd")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	names := []string{"plain", "with\x1funit", "with\x1erecord", "x\x1f1\x1f0\x1ey"}
	for i := range 40 {
		sp := spans.AppendEmpty()
		sp.SetTraceID(traceID(uint64(i)))
		sp.SetSpanID(spanID(uint64(i)))
		sp.SetName(names[i%len(names)])
		start := now.Add(-time.Duration(i) * time.Second)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i+1) * time.Millisecond)))
	}
	src := loadSources(t, conventions.Default(), randomTelemetry{batches: []randomBatch{{traces: &td}}})
	pq := telemetry.PerformanceQuery{Window: telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.Add(time.Second).UnixMilli()},
		Service: "odd", TopN: 10}
	got, err := src.caps.ServicePerformance(ctx, pq)
	if err != nil {
		t.Fatal(err)
	}
	if got.SampleCount != 40 || len(got.TopOperations) != len(names) {
		t.Fatalf("measured %d spans in %d operations, want 40 in %d", got.SampleCount, len(got.TopOperations), len(names))
	}
	src.sameAnswers(t, "ServicePerformance", func(s telemetry.Source) (any, error) { return s.ServicePerformance(ctx, pq) })
}

func TestWindowsSplitIntoWholeBucketsAndEdges(t *testing.T) {
	const min5 = 5 * 60 * 1000
	for _, c := range []struct {
		name   string
		w      telemetry.Window
		lo, hi int64
		edges  int
	}{
		{"shorter than a bucket", telemetry.Window{StartMs: min5 + 10, EndMs: min5 + 20}, 0, 0, 1},
		{"aligned on both ends", telemetry.Window{StartMs: 2 * min5, EndMs: 5 * min5}, 2, 5, 0},
		{"ragged on both ends", telemetry.Window{StartMs: 2*min5 - 1, EndMs: 5*min5 + 1}, 2, 5, 2},
		{"inside two buckets", telemetry.Window{StartMs: 2*min5 - 1, EndMs: 2*min5 + 1}, 0, 0, 1},
		{"empty", telemetry.Window{StartMs: 9, EndMs: 9}, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := splitWindow(c.w)
			if sp.lo != c.lo || sp.hi != c.hi || len(sp.edges) != c.edges {
				t.Fatalf("splitWindow = %+v, want buckets [%d, %d) and %d edges", sp, c.lo, c.hi, c.edges)
			}
			// The buckets and edges cover the window exactly once.
			covered := (sp.hi - sp.lo) * bucketNs
			for _, e := range sp.edges {
				covered += e[1] - e[0]
			}
			if want := max(c.w.EndMs-c.w.StartMs, 0) * 1e6; covered != want {
				t.Fatalf("covers %d ns, want %d", covered, want)
			}
		})
	}
}

func TestMessagesHoldingSeparatorsAreStillGroupedExactly(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "odd")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i, msg := range []string{"plain failure", "with\x1funit", "with\x1erecord", "x\x1f1\x1e2"} {
		sp := spans.AppendEmpty()
		sp.SetTraceID(traceID(uint64(i)))
		sp.SetSpanID(spanID(uint64(i)))
		sp.SetName("op")
		start := now.Add(-time.Duration(i+1) * time.Minute)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(msg)
	}
	src := loadSources(t, conventions.Default(), randomTelemetry{batches: []randomBatch{{traces: &td}}})
	q := telemetry.ErrorsQuery{Window: telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.Add(time.Second).UnixMilli()}}
	got, err := src.caps.Errors(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Events != 4 || len(got.Groups) != 4 {
		t.Fatalf("%d occurrences in %d groups, want 4 in 4", got.Events, len(got.Groups))
	}
	src.sameAnswers(t, "Errors", func(s telemetry.Source) (any, error) { return s.Errors(ctx, q) })
}

// The bucket a window ends in is read whole from the rollups when nothing lies past the
// window's end (the live bucket while an app sends), and counted from its rows when something
// does; the counts are the window's either way.
func TestTheLiveBucketIsReadWholeOnlyWhenNothingLiesPastTheWindowsEnd(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: 1000 * time.Hour})
	b := NewBackend(s)
	conv := conventions.Default()
	bucket := time.Unix(0, (time.Now().Add(-time.Hour).UnixNano()/bucketNs)*bucketNs)
	// 16 spans 10 s into the bucket, 8 of them in the bucket before.
	for n, at := range []time.Time{bucket.Add(-2 * time.Minute), bucket.Add(10 * time.Second)} {
		if _, _, err := s.IngestTraces(ctx, makeTraces("checkout", uint64(n), 8, at)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.IngestTraces(ctx, makeTraces("checkout", 2, 8, bucket.Add(11*time.Second))); err != nil {
		t.Fatal(err)
	}
	w := telemetry.Window{StartMs: bucket.Add(-4 * time.Minute).UnixMilli(), EndMs: bucket.Add(time.Minute).UnixMilli()}
	check := func(wantLive bool, wantSpans int64) {
		t.Helper()
		tx, err := s.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only
		sp, err := liveSplit(ctx, tx, w)
		if err != nil {
			t.Fatal(err)
		}
		e := bucket.UnixNano() / bucketNs
		live := sp.lo == e && sp.hi == e+1 && len(sp.edges) == 1 && sp.edges[0] == [2]int64{w.StartMs * 1e6, e * bucketNs}
		if live != wantLive {
			t.Errorf("liveSplit = %+v; the bucket ending the window read whole: %v, want %v", sp, live, wantLive)
		}
		st, ok, err := b.CountActivity(ctx, telemetry.StatusQuery{Window: w}, telemetry.Ask{Conv: conv, Limits: telemetry.DefaultLimits()})
		if err != nil || !ok {
			t.Fatalf("CountActivity: %v (handled %v)", err, ok)
		}
		if st.Spans != wantSpans {
			t.Errorf("spans in the window = %d, want %d", st.Spans, wantSpans)
		}
	}
	check(true, 24)
	// A span past the window's end in the same bucket: the bucket's rows are counted again.
	if _, _, err := s.IngestTraces(ctx, makeTraces("checkout", 3, 8, bucket.Add(2*time.Minute))); err != nil {
		t.Fatal(err)
	}
	check(false, 24)
}
