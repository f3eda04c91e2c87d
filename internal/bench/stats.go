package bench

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Summary condenses a series of durations into the statistics the targets are written in.
type Summary struct {
	N                     int
	Min, Median, P95, P99 time.Duration
	Max                   time.Duration
}

// Summarize computes nearest-rank percentiles (element ceil(p·n)−1 of the sorted series), the
// definition the contracts use everywhere. An empty series summarizes to zeros.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Summary{
		N:      len(s),
		Min:    s[0],
		Median: rank(s, 0.50),
		P95:    rank(s, 0.95),
		P99:    rank(s, 0.99),
		Max:    s[len(s)-1],
	}
}

// rank is the nearest-rank p-quantile of a sorted, non-empty series.
func rank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// String prints the summary for a log line.
func (s Summary) String() string {
	return fmt.Sprintf("n=%d min=%s median=%s p95=%s p99=%s max=%s", s.N, ms(s.Min), ms(s.Median), ms(s.P95), ms(s.P99), ms(s.Max))
}

// ms prints a duration in milliseconds with enough digits for microsecond differences.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

// us prints a duration in microseconds.
func us(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}
