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

// SetLoneTracesMax sets loneTracesMax for the test's lifetime.
func SetLoneTracesMax(t testing.TB, n int) {
	t.Helper()
	saved := loneTracesMax
	loneTracesMax = n
	t.Cleanup(func() { loneTracesMax = saved })
}

// SetAskByIDMax sets askByIDMax for the test's lifetime.
func SetAskByIDMax(t testing.TB, n int) {
	t.Helper()
	saved := askByIDMax
	askByIDMax = n
	t.Cleanup(func() { askByIDMax = saved })
}
