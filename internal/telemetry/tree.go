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

// CriticalPath returns the span ids of the chain that determined the run's duration: from the
// longest root, repeatedly the child that ended last (ties: the longer, then the lower id).
// It answers "what was the run waiting on?".
func CriticalPath(spans []Span) []string {
	if len(spans) == 0 {
		return nil
	}
	byID := make(map[string]bool, len(spans))
	for _, s := range spans {
		byID[s.SpanID] = true
	}
	children := make(map[string][]int, len(spans))
	root := -1
	better := func(a, b int) bool { // is a a better pick than b?
		ea, eb := spans[a].StartNs+spans[a].DurationNs, spans[b].StartNs+spans[b].DurationNs
		if ea != eb {
			return ea > eb
		}
		if spans[a].DurationNs != spans[b].DurationNs {
			return spans[a].DurationNs > spans[b].DurationNs
		}
		return spans[a].SpanID < spans[b].SpanID
	}
	for i, s := range spans {
		if s.ParentSpanID != "" && byID[s.ParentSpanID] && s.ParentSpanID != s.SpanID {
			children[s.ParentSpanID] = append(children[s.ParentSpanID], i)
			continue
		}
		if root < 0 || spans[i].DurationNs > spans[root].DurationNs ||
			(spans[i].DurationNs == spans[root].DurationNs && better(i, root)) {
			root = i
		}
	}
	if root < 0 { // every span is in a cycle
		root = 0
	}
	var path []string
	seen := map[int]bool{}
	for cur := root; cur >= 0 && !seen[cur]; {
		seen[cur] = true
		path = append(path, spans[cur].SpanID)
		next := -1
		for _, c := range children[spans[cur].SpanID] {
			if next < 0 || better(c, next) {
				next = c
			}
		}
		cur = next
	}
	return path
}
