package telemetry

import (
	"math"
	"slices"
)

// NearestRank returns the p-th percentile (0 < p ≤ 1) of sorted by the nearest-rank method:
// the element at ceil(p·n)−1. It is exact, needs no interpolation, and every source computes
// the same value from the same spans. An empty input yields 0.
func NearestRank(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[RankIndex(len(sorted), p)]
}

// RankIndex is the zero-based index of the nearest-rank p-th percentile among n sorted values,
// for backends that fetch one row at an offset instead of every value.
func RankIndex(n int, p float64) int {
	// The epsilon keeps 0.95*20 = 19.000000000000004 from rounding up to 20.
	i := int(math.Ceil(p*float64(n)-1e-9)) - 1
	return max(0, min(i, n-1))
}

// DurationStats are the nearest-rank statistics of a set of durations (ns).
type DurationStats struct {
	Count         int64
	SumNs         int64
	P50, P95, P99 int64
	MinNs, MaxNs  int64
}

// Summarize sorts durations in place and computes their statistics.
func Summarize(durations []int64) DurationStats {
	if len(durations) == 0 {
		return DurationStats{}
	}
	slices.Sort(durations)
	var sum int64
	for _, d := range durations {
		sum += d
	}
	return DurationStats{
		Count: int64(len(durations)),
		SumNs: sum,
		P50:   NearestRank(durations, 0.50),
		P95:   NearestRank(durations, 0.95),
		P99:   NearestRank(durations, 0.99),
		MinNs: durations[0],
		MaxNs: durations[len(durations)-1],
	}
}

// Ms converts nanoseconds to milliseconds as the tools report them, rounded to the microsecond
// so answers are stable across sources that store different precisions.
func Ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

// NsToMs converts a nanosecond timestamp to Unix milliseconds (floor).
func NsToMs(ns int64) int64 { return ns / 1e6 }

// Share is part/total rounded to four decimals (0 when total is 0), so every source reports
// the same fraction.
func Share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return math.Round(float64(part)/float64(total)*1e4) / 1e4
}
