package realapp

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"the median of four values is the second smallest", ms(40, 10, 30, 20), 0.5, 20 * time.Millisecond},
		{"p95 of twenty values is the nineteenth", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 0.95, 19 * time.Millisecond},
		{"p99 of three values is the largest", ms(3, 1, 2), 0.99, 3 * time.Millisecond},
		{"no values give zero", nil, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nearestRank(tt.in, tt.p); got != tt.want {
				t.Fatalf("nearestRank(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
			}
		})
	}
}
