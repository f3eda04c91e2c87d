package bench

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	seq := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[n-1-i] = time.Duration(i+1) * time.Millisecond // reversed: Summarize must sort
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"an empty series summarizes to zeros", nil, Summary{}},
		{"one sample is every percentile", seq(1), Summary{N: 1, Min: time.Millisecond, Median: time.Millisecond, P95: time.Millisecond, P99: time.Millisecond, Max: time.Millisecond}},
		{"a hundred samples take the nearest rank", seq(100), Summary{N: 100, Min: 1 * time.Millisecond, Median: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}},
		{"fifty samples round the rank up", seq(50), Summary{N: 50, Min: 1 * time.Millisecond, Median: 25 * time.Millisecond, P95: 48 * time.Millisecond, P99: 50 * time.Millisecond, Max: 50 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.in); got != tt.want {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}
