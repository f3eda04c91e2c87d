package telemetry

import (
	"cmp"
	"slices"
)

// SortRuns orders runs newest first, then by trace id and run id. It is stable: runs that tie
// (duplicates of a root span) keep the order of the scan, which every backend returns alike.
func SortRuns(runs []RunSummary) {
	slices.SortStableFunc(runs, func(a, b RunSummary) int {
		return cmp.Or(cmp.Compare(b.StartMs, a.StartMs), cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.ID, b.ID))
	})
}

// SortServiceActivity orders services busiest first, then by name.
func SortServiceActivity(a []ServiceActivity) {
	slices.SortFunc(a, func(x, y ServiceActivity) int {
		return cmp.Or(cmp.Compare(y.Spans, x.Spans), cmp.Compare(x.Service, y.Service))
	})
}
