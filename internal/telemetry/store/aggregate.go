package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
)

// Aggregation helpers of the capabilities: windows split into rollup buckets and edges, and
// compact texts of durations that SQLite hands over in one value instead of a row per span.

// windowSplit divides a window in ns into whole rollup buckets [lo, hi) and the partial ranges
// at its edges that must be counted from rows.
type windowSplit struct {
	lo, hi int64      // buckets; lo == hi when the window holds no whole bucket
	edges  [][2]int64 // [start, end) ns ranges, oldest first
}

func splitWindow(w telemetry.Window) windowSplit {
	start, end := w.StartMs*1e6, w.EndMs*1e6
	if end <= start {
		return windowSplit{}
	}
	lo := (start + bucketNs - 1) / bucketNs
	hi := end / bucketNs
	if lo >= hi {
		return windowSplit{edges: [][2]int64{{start, end}}}
	}
	sp := windowSplit{lo: lo, hi: hi}
	if s := lo * bucketNs; start < s {
		sp.edges = append(sp.edges, [2]int64{start, s})
	}
	if e := hi * bucketNs; e < end {
		sp.edges = append(sp.edges, [2]int64{e, end})
	}
	return sp
}

// liveSplit is splitWindow for a window over the stored rows: when the window ends inside a
// bucket whose rows all lie before its end — the live bucket, while an app sends — that bucket
// is read whole from the rollups instead of counting its rows (at thousands of spans a second,
// up to five minutes of rows on every call). One seek per table tells whether a row lies
// between the window's end and the bucket's; then the rollup's count for the bucket is exactly
// the window's part of it, as of the same snapshot.
func liveSplit(ctx context.Context, q queryer, w telemetry.Window) (windowSplit, error) {
	sp := splitWindow(w)
	start, end := w.StartMs*1e6, w.EndMs*1e6
	if end <= start || end%bucketNs == 0 {
		return sp, nil
	}
	e := end / bucketNs // the bucket the window ends in
	if e*bucketNs < start {
		return sp, nil // the window lies inside one bucket, after its start
	}
	var later bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+TracesTable+` INDEXED BY otel_traces_time
		WHERE Timestamp >= ? AND Timestamp < ?) OR EXISTS (SELECT 1 FROM `+LogsTable+` INDEXED BY otel_logs_time
		WHERE Timestamp >= ? AND Timestamp < ?)`, end, (e+1)*bucketNs, end, (e+1)*bucketNs).Scan(&later); err != nil {
		return sp, fmt.Errorf("look past the window's end: %w", err)
	}
	if later {
		return sp, nil
	}
	live := windowSplit{lo: e, hi: e + 1}
	if sp.lo < sp.hi {
		live.lo = sp.lo
	}
	if s := live.lo * bucketNs; start < s {
		live.edges = [][2]int64{{start, s}}
	}
	return live, nil
}

// Separators of the samples' text: ASCII unit and record separators.
const (
	fieldSep  = '\x1f'
	recordSep = '\x1e'
)

// opDurations are one operation's durations and error count in a window.
type opDurations struct {
	name     string
	ds       []int64
	errFlags []bool
	errors   int64
}

// errSeparatorInName means the samples' text did not parse into one record per span: a span
// name holds a separator.
var errSeparatorInName = errors.New("a span name holds a separator")

// parseOperations groups the samples' text of n records by span name, in first-seen order.
func parseOperations(text string, n int) ([]*opDurations, error) {
	var out []*opDurations
	index := map[string]*opDurations{}
	records := 0
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && text[j] != fieldSep && text[j] != recordSep {
			j++
		}
		if j == len(text) || text[j] != fieldSep {
			return nil, errSeparatorInName
		}
		name := text[i:j]
		d, j, ok := parseUint(text, j+1)
		if !ok || j >= len(text) || text[j] != fieldSep || j+1 >= len(text) || (text[j+1] != '0' && text[j+1] != '1') {
			return nil, errSeparatorInName
		}
		isErr := int64(text[j+1] - '0')
		j += 2
		if j < len(text) {
			if text[j] != recordSep {
				return nil, errSeparatorInName
			}
			j++
		}
		o := index[name]
		if o == nil {
			o = &opDurations{name: name}
			index[name] = o
			out = append(out, o)
		}
		o.ds = append(o.ds, d)
		o.errFlags = append(o.errFlags, isErr == 1)
		o.errors += isErr
		records++
		i = j
	}
	if records != n {
		return nil, errSeparatorInName
	}
	return out, nil
}

// parseUint reads the decimal digits at text[i:], returning the value and the index after them.
func parseUint(text string, i int) (v int64, next int, ok bool) {
	start := i
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		v = v*10 + int64(text[i]-'0')
		i++
	}
	return v, i, i > start
}

// mergeSorted merges sorted lists holding n values in total into one sorted list.
func mergeSorted(lists [][]int64, n int) []int64 {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	// A binary heap of the lists' heads, smallest on top.
	type head struct{ list, pos int }
	h := make([]head, 0, len(lists))
	less := func(a, b head) bool { return lists[a.list][a.pos] < lists[b.list][b.pos] }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(h[c+1], h[c]) {
				c++
			}
			if !less(h[c], h[i]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i, l := range lists {
		if len(l) > 0 {
			h = append(h, head{list: i})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out := make([]int64, 0, n)
	for len(h) > 0 {
		top := h[0]
		out = append(out, lists[top.list][top.pos])
		if top.pos+1 < len(lists[top.list]) {
			h[0].pos++
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out
}

// parseDurations reads n non-negative integers separated by commas.
func parseDurations(text string, n int) ([]int64, error) {
	out := make([]int64, 0, n)
	for i := 0; i < len(text); i++ {
		v, next, ok := parseUint(text, i)
		if !ok || (next < len(text) && text[next] != ',') {
			return nil, fmt.Errorf("malformed duration list at byte %d", next)
		}
		out = append(out, v)
		i = next
	}
	if len(out) != n {
		return nil, fmt.Errorf("read %d durations, want %d", len(out), n)
	}
	return out, nil
}

// nthSmallest returns the k-th smallest (zero-based) of xs, reordering xs: quickselect with a
// median-of-three pivot, linear on average.
func nthSmallest(xs []int64, k int) int64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
