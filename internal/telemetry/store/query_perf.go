package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// ServicePerformance computes exact nearest-rank latency statistics of one service's spans in
// the window (the newest ones, up to the scan limit). It does not depend on the conventions:
// the (ServiceName, Timestamp, SpanName, Duration, IsError) index holds everything it reads,
// and SQLite hands the window over as one text of name, duration and error flag per span —
// passing a row per span through database/sql costs several times SQLite's own work per span.
// A span name holding the separators cannot corrupt the answer: the text then does not parse
// into exactly one record per span, and the spans are read row by row instead.
func (q *Querier) ServicePerformance(ctx context.Context, pq telemetry.PerformanceQuery) (telemetry.Performance, error) {
	p := telemetry.Performance{Service: pq.Service}
	var f filter
	f.serviceIndexed(cmp.Or(pq.Service, telemetry.UnknownService))
	f.window(pq.Window)
	if pq.Operation != "" {
		f.add("SpanName = ?", pq.Operation)
	}
	budget := q.limits.MaxScanRows
	// Reading the window whole is cheaper than through a LIMIT; the activity rollup tells
	// beforehand when the window surely holds more spans than the scan limit.
	limit := 0
	if over, err := q.spansAtLeast(ctx, pq, budget+1); err != nil {
		return p, err
	} else if over {
		limit = budget
	}
	n, text, err := q.serviceWindow(ctx, f, limit)
	if err != nil {
		return p, err
	}
	limited := limit > 0
	if n > budget {
		limited = true
		if n, text, err = q.serviceWindow(ctx, f, budget); err != nil {
			return p, err
		}
	}
	ops, err := parseOperations(text, n)
	if errors.Is(err, errSeparatorInName) {
		return q.servicePerformanceDecoded(ctx, pq)
	}
	if err != nil {
		return p, fmt.Errorf("read service spans: %w", err)
	}
	p.Scan = scanOf(pq.Window, n, limited)
	if n == 0 {
		return p, nil
	}
	var sum int64
	all := make([][]int64, 0, len(ops))
	for _, o := range ops {
		slices.Sort(o.ds)
		for _, d := range o.ds {
			sum += d
		}
		all = append(all, o.ds)
		p.ErrorCount += o.errors
		p.TopOperations = append(p.TopOperations, telemetry.OperationStats{
			Name: o.name, Count: int64(len(o.ds)), ErrorCount: o.errors,
			P50Ms: telemetry.Ms(telemetry.NearestRank(o.ds, 0.50)), P95Ms: telemetry.Ms(telemetry.NearestRank(o.ds, 0.95)),
		})
	}
	merged := mergeSorted(all, n)
	p.SampleCount = int64(n)
	p.AverageMs = telemetry.Ms(sum / p.SampleCount)
	p.P50Ms = telemetry.Ms(telemetry.NearestRank(merged, 0.50))
	p.P95Ms = telemetry.Ms(telemetry.NearestRank(merged, 0.95))
	p.P99Ms = telemetry.Ms(telemetry.NearestRank(merged, 0.99))
	slices.SortFunc(p.TopOperations, func(a, b telemetry.OperationStats) int {
		return cmp.Or(cmp.Compare(b.P95Ms, a.P95Ms), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
	if n := cmp.Or(pq.TopN, 5); len(p.TopOperations) > n {
		p.TopOperations = p.TopOperations[:n]
	}
	return p, nil
}

// Separators of serviceWindow's text: ASCII unit and record separators.
const (
	fieldSep  = '\x1f'
	recordSep = '\x1e'
)

// serviceWindow reads the spans passing f — the newest limit of them when limit > 0 — as
// (count, text), the text holding "name US duration US error" per span, records separated by
// RS.
func (q *Querier) serviceWindow(ctx context.Context, f filter, limit int) (int, string, error) {
	const columns = `COUNT(*), COALESCE(group_concat(SpanName || char(31) || Duration || char(31) || IsError, char(30)), '')`
	query, args := `SELECT `+columns+` FROM `+TracesTable+f.where(), f.args
	if limit > 0 {
		query = `SELECT ` + columns + ` FROM (SELECT SpanName, Duration, IsError FROM ` + TracesTable + f.where() +
			` ORDER BY Timestamp DESC LIMIT ?)`
		args = append(args, limit)
	}
	var n int
	var text string
	if err := q.store.DB().QueryRowContext(ctx, query, args...).Scan(&n, &text); err != nil {
		return 0, "", fmt.Errorf("read service spans: %w", err)
	}
	return n, text, nil
}

// spansAtLeast reports whether the activity rollup's whole buckets inside the window already
// hold at least n spans of the service (span counts do not depend on the conventions).
func (q *Querier) spansAtLeast(ctx context.Context, pq telemetry.PerformanceQuery, n int) (bool, error) {
	sp := splitWindow(pq.Window)
	if sp.lo >= sp.hi {
		return false, nil
	}
	var spans int64
	err := q.store.DB().QueryRowContext(ctx, `SELECT COALESCE(SUM(Spans), 0) FROM `+ActivityTable+`
		WHERE Bucket >= ? AND Bucket < ? AND ServiceName = ?`, sp.lo, sp.hi, storedService(cmp.Or(pq.Service, telemetry.UnknownService))).
		Scan(&spans)
	if err != nil {
		return false, fmt.Errorf("count service spans: %w", err)
	}
	return spans >= int64(n), nil
}

// opDurations are one operation's durations and error count in a window.
type opDurations struct {
	name   string
	ds     []int64
	errors int64
}

// errSeparatorInName means serviceWindow's text did not parse into one record per span: a span
// name holds a separator.
var errSeparatorInName = errors.New("a span name holds a separator")

// parseOperations groups serviceWindow's text of n records by span name, in first-seen order.
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
