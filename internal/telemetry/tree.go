package telemetry

import (
	"cmp"
	"slices"
)

// TreeSpan is a span placed in a run's depth-first tree.
type TreeSpan struct {
	Span
	// Depth is 0 for a root (a span whose parent is not in the run).
	Depth int
}

// Tree orders spans depth-first (children by start time, then span id), each root — a span
// whose parent is absent — starting a new tree in start order. It keeps at most maxSpans spans
// and none deeper than maxDepth (depth counted from 0, so maxDepth 1 keeps roots only);
// omitted counts the spans left out. Cycles in corrupt data cannot loop: each span is visited
// once.
func Tree(spans []Span, maxSpans, maxDepth int) (out []TreeSpan, omitted int) {
	byID := make(map[string]int, len(spans))
	for i, s := range spans {
		byID[s.SpanID] = i
	}
	children := make(map[string][]int, len(spans))
	var roots []int
	for i, s := range spans {
		if _, ok := byID[s.ParentSpanID]; ok && s.ParentSpanID != "" && s.ParentSpanID != s.SpanID {
			children[s.ParentSpanID] = append(children[s.ParentSpanID], i)
			continue
		}
		roots = append(roots, i)
	}
	order := func(a, b int) int {
		return cmp.Or(cmp.Compare(spans[a].StartNs, spans[b].StartNs), cmp.Compare(spans[a].SpanID, spans[b].SpanID))
	}
	slices.SortFunc(roots, order)
	for _, c := range children {
		slices.SortFunc(c, order)
	}
	visited := make([]bool, len(spans))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if visited[i] {
			return
		}
		visited[i] = true
		if depth < maxDepth && len(out) < maxSpans {
			out = append(out, TreeSpan{Span: spans[i], Depth: depth})
		}
		for _, c := range children[spans[i].SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	// Spans only reachable through a cycle have no root; show them as roots.
	for i := range spans {
		if !visited[i] {
			walk(i, 0)
		}
	}
	return out, len(spans) - len(out)
}

// CriticalPath returns the span ids of the run's critical path as Jaeger defines it: the
// segments of work that determined when the run ended. From the root (the longest span
// without a parent), it follows the child that finished last; back in the parent, the child
// that finished last before that child started; and so on, down every such child. A failed
// request whose slow query ended just before a quick error handler has both on its path, the
// query included. Children are clipped to their parent's time. The ids come in start order
// (parents before children at equal starts); each once. Cycles in corrupt data cannot loop.
//
// "Before" allows for the clock that stamped the later child's start: a child counts as ending
// before a sibling when it ends less than that clock's resolution after the sibling's recorded
// start. The OpenTelemetry JS SDK stamps starts in whole milliseconds and ends at that start
// plus a sub-millisecond duration, so a query that failed 0.1 ms before its error handler
// started can appear to end 0.5 ms after it; without the allowance the query, which the run
// waited for, would fall off the path. The resolution is read off the start itself (see
// startResolution): nanosecond starts keep Jaeger's exact rule.
func CriticalPath(spans []Span) []string {
	if len(spans) == 0 {
		return nil
	}
	byID := make(map[string]int, len(spans))
	for i, s := range spans {
		if _, dup := byID[s.SpanID]; !dup {
			byID[s.SpanID] = i
		}
	}
	children := make(map[int][]int, len(spans))
	root := -1
	for i, s := range spans {
		if p, ok := byID[s.ParentSpanID]; ok && s.ParentSpanID != "" && p != i {
			children[p] = append(children[p], i)
			continue
		}
		if root < 0 || s.DurationNs > spans[root].DurationNs ||
			(s.DurationNs == spans[root].DurationNs && s.SpanID < spans[root].SpanID) {
			root = i
		}
	}
	if root < 0 { // every span is in a cycle
		root = 0
	}
	on := map[int]bool{}
	// walk adds span i's critical sections between start and end (clipped bounds), then those
	// of the children that determine them.
	var walk func(i int, start, end int64)
	walk = func(i int, start, end int64) {
		on[i] = true
		// A child is before the cursor when it ends less than slack after it; slack is the
		// resolution of the start that set the cursor (none at the parent's end, which clips).
		cursor, slack := end, int64(1)
		for steps := 0; steps <= len(spans); steps++ {
			next, nextEnd := -1, int64(0)
			for _, c := range children[i] {
				cs := max(spans[c].StartNs, start)
				ce := min(spans[c].StartNs+spans[c].DurationNs, end)
				if ce-cursor >= slack || ce < cs || on[c] {
					continue
				}
				if next < 0 || ce > nextEnd || (ce == nextEnd && spans[c].SpanID < spans[next].SpanID) {
					next, nextEnd = c, ce
				}
			}
			if next < 0 {
				return
			}
			cs := max(spans[next].StartNs, start)
			walk(next, cs, nextEnd)
			cursor, slack = cs, startResolution(spans[next].StartNs)
		}
	}
	walk(root, spans[root].StartNs, spans[root].StartNs+spans[root].DurationNs)
	path := make([]int, 0, len(on))
	for i := range on {
		path = append(path, i)
	}
	depthOf := func(i int) int {
		d := 0
		for cur := i; d <= len(spans); d++ {
			p, ok := byID[spans[cur].ParentSpanID]
			if !ok || spans[cur].ParentSpanID == "" || p == cur {
				break
			}
			cur = p
		}
		return d
	}
	slices.SortFunc(path, func(a, b int) int {
		return cmp.Or(cmp.Compare(spans[a].StartNs, spans[b].StartNs), cmp.Compare(depthOf(a), depthOf(b)), cmp.Compare(spans[a].SpanID, spans[b].SpanID))
	})
	ids := make([]string, len(path))
	for k, i := range path {
		ids[k] = spans[i].SpanID
	}
	return ids
}

// startResolution is the resolution of the clock that stamped a start time, as far as the
// time shows it: a whole millisecond (the JS SDK's Date.now()) is 1 ms, a whole microsecond
// 1 µs, anything else 1 ns. A nanosecond clock lands on a whole millisecond once in a million
// starts, which at worst widens that one comparison by a millisecond.
func startResolution(ns int64) int64 {
	switch {
	case ns%1_000_000 == 0:
		return 1_000_000
	case ns%1_000 == 0:
		return 1_000
	default:
		return 1
	}
}
