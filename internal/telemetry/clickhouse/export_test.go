package clickhouse

import "testing"

// SetNarrowMinSpans sets the table size from which reads of traces' spans are narrowed to
// their time (narrowMinSpans) for the test's lifetime, so a test can narrow a table smaller
// than the default bound.
func SetNarrowMinSpans(t testing.TB, n uint64) {
	t.Helper()
	saved := narrowMinSpans
	narrowMinSpans = n
	t.Cleanup(func() { narrowMinSpans = saved })
}

// NearestRank is nearestRank: ClickHouse's exact nearest-rank percentiles of column at ps.
func NearestRank(column string, ps ...float64) string { return nearestRank(column, ps...) }
