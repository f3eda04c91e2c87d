package flows

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry"
)

// AnalyzeServicePerformance implements gen.Flows: latency and errors of one service, with an
// optional comparison window. An unknown service is an answer with sampleCount 0, found false
// and the known services, not an error.
func (f *Flows) AnalyzeServicePerformance(ctx context.Context, in gen.AnalyzeServicePerformanceInput) (gen.AnalyzeServicePerformanceOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.AnalyzeServicePerformanceOutput{}, err
	}
	var before *telemetry.Window
	if in.CompareTo != nil {
		b, err := f.compareWindow(*in.CompareTo)
		if err != nil {
			return gen.AnalyzeServicePerformanceOutput{}, err
		}
		before = &b
	}
	src, err := f.source()
	if err != nil {
		return gen.AnalyzeServicePerformanceOutput{}, err
	}
	limit := in.Limit
	q := telemetry.PerformanceQuery{Window: w, Service: in.Service, Operation: deref(in.Operation), TopN: limit, Invocation: deref(in.Invocation)}
	p, err := src.ServicePerformance(ctx, q)
	if err != nil {
		return gen.AnalyzeServicePerformanceOutput{}, telemetryErr(err)
	}
	out := f.perfOut(p, w)
	if len(p.KnownOperations) > 0 {
		out.KnownOperations = p.KnownOperations
		out.Hint = ptr(fmt.Sprintf("no span named %q in service %q; its entry operations: %s", deref(in.Operation), in.Service, strings.Join(p.KnownOperations, ", ")))
	}
	if p.SampleCount == 0 {
		if why := f.whyEmpty(ctx, src, w, in.Service, "entry span", false); why.Unknown {
			out.Found, out.KnownServices, out.Hint = ptr(false), why.Known, &why.Hint
		} else if out.Hint == nil {
			out.Hint = optStr(why.Hint)
		}
	}
	if before != nil {
		// Both sides' operations as far as they are listed (the 20 slowest, and any with
		// errors), so that one absent from a side is known to have had no calls there.
		afterOps := p.TopOperations
		if limit < telemetry.MaxTopOperations {
			wide := q
			wide.TopN = telemetry.MaxTopOperations
			a, err := src.ServicePerformance(ctx, wide)
			if err != nil {
				return gen.AnalyzeServicePerformanceOutput{}, telemetryErr(err)
			}
			afterOps = a.TopOperations
		}
		q.Window, q.TopN = *before, telemetry.MaxTopOperations
		b, err := src.ServicePerformance(ctx, q)
		if err != nil {
			return gen.AnalyzeServicePerformanceOutput{}, telemetryErr(err)
		}
		out.Comparison = comparison(f.perfOut(b, *before), out)
		if out.Comparison.Note == nil {
			out.Comparison.Operations = operationChanges(b.TopOperations, afterOps)
		}
		out.PercentileRelativeError = max(out.PercentileRelativeError, b.PercentileError)
	}
	if in.Detail == gen.DetailSummary {
		out.TopOperations = nil
	}
	return out, nil
}

// compareWindow is the window of compareTo: its length, ending endAgo before now.
func (f *Flows) compareWindow(c gen.AnalyzeServicePerformanceInputCompareTo) (telemetry.Window, error) {
	length, ok := parseDuration(c.Window)
	if !ok || length > maxWindow {
		return telemetry.Window{}, invalidArg("/compareTo/window", "must be a duration such as 15m, at most 7d")
	}
	ago, ok := parseDuration(c.EndAgo)
	if !ok || ago > maxWindow {
		return telemetry.Window{}, invalidArg("/compareTo/endAgo", "must be a duration such as 1h, at most 7d")
	}
	end := f.Now().UnixMilli() - ago.Milliseconds()
	return telemetry.Window{StartMs: end - length.Milliseconds(), EndMs: end}, nil
}

// perfOut maps the port's statistics, deriving rate and throughput from the window.
func (f *Flows) perfOut(p telemetry.Performance, w telemetry.Window) gen.AnalyzeServicePerformanceOutput {
	out := gen.AnalyzeServicePerformanceOutput{
		Service: p.Service, SinceUnixMs: w.StartMs, SampleCount: p.SampleCount, ErrorCount: p.ErrorCount,
		AverageDurationMs: p.AverageMs, P50DurationMs: p.P50Ms, P95DurationMs: p.P95Ms, P99DurationMs: p.P99Ms,
		PercentileRelativeError: p.PercentileError, Scan: f.scanOut(p.Scan),
	}
	if p.SampleCount > 0 {
		out.ErrorRate = round4(float64(p.ErrorCount) / float64(p.SampleCount))
	}
	if p.SampleCount > 0 {
		out.TrafficFromUnixMs, out.TrafficToUnixMs = ptr(p.FirstMs), ptr(p.LastMs)
		out.ThroughputPerMinute = round4(float64(p.SampleCount) / trafficMinutes(p, w))
	}
	for _, o := range p.TopOperations {
		out.TopOperations = append(out.TopOperations, gen.AnalyzeServicePerformanceOutputTopOperation{
			Name: o.Name, Count: o.Count, ErrorCount: o.ErrorCount, P50DurationMs: o.P50Ms, P95DurationMs: o.P95Ms,
		})
	}
	return out
}

// trafficMinutes is the length of the span that had traffic, over which throughput is a rate
// (docs/semantics.md R17): from the first sample's start to the last's, counted as a minute at
// least (or the whole window, when it is shorter), so a few samples never extrapolate to a
// rate nobody saw.
func trafficMinutes(p telemetry.Performance, w telemetry.Window) float64 {
	floor := min(1, w.Minutes())
	if floor <= 0 {
		floor = 1
	}
	return max(float64(p.LastMs-p.FirstMs)/60000, floor)
}

// comparison compares the compareTo window (bo) with the window (out). A side without samples
// has no statistics: the comparison says so and carries no numbers rather than zeros that
// would read as "infinitely faster".
func comparison(bo, out gen.AnalyzeServicePerformanceOutput) *gen.AnalyzeServicePerformanceOutputComparison {
	c := &gen.AnalyzeServicePerformanceOutputComparison{BeforeSamples: bo.SampleCount, AfterSamples: out.SampleCount}
	switch {
	case bo.SampleCount == 0 && out.SampleCount == 0:
		c.Note = ptr("neither window has samples: nothing to compare")
	case bo.SampleCount == 0:
		c.Note = ptr("the compareTo window has no samples: nothing to compare against")
	case out.SampleCount == 0:
		c.Note = ptr("the window has no samples: nothing to compare")
	default:
		c.Average = change(bo.AverageDurationMs, out.AverageDurationMs)
		c.P50 = change(bo.P50DurationMs, out.P50DurationMs)
		c.P95 = change(bo.P95DurationMs, out.P95DurationMs)
		c.P99 = change(bo.P99DurationMs, out.P99DurationMs)
		c.ErrorRate = change(bo.ErrorRate, out.ErrorRate)
		c.Throughput = change(bo.ThroughputPerMinute, out.ThroughputPerMinute)
	}
	return c
}

// The thresholds of an operation's outcome in a comparison: its p95 must move by both a share
// and a duration, or its error rate by some points, on enough calls each side; anything less is
// stable, so a comparison never reports a change the samples cannot carry.
const (
	changedP95Share    = 0.2
	changedP95Ms       = 1.0
	changedErrorPoints = 0.05
	fewCalls           = 5
	maxOperationDiffs  = 10
)

// operationChanges compares each operation of the compareTo window (before) with the window
// (after), the most changed first: slower, new, faster, gone, too few samples, stable; within
// each, the larger p95 move first. An operation absent from a side is new or gone only when
// that side listed every operation (fewer than MaxTopOperations); otherwise it is left out.
func operationChanges(before, after []telemetry.OperationStats) []gen.AnalyzeServicePerformanceOutputComparisonOperation {
	type diff struct {
		op   gen.AnalyzeServicePerformanceOutputComparisonOperation
		rank int
		move float64
	}
	beforeAll, afterAll := len(before) < telemetry.MaxTopOperations, len(after) < telemetry.MaxTopOperations
	byName := func(list []telemetry.OperationStats) map[string]*telemetry.OperationStats {
		m := make(map[string]*telemetry.OperationStats, len(list))
		for i := range list {
			m[list[i].Name] = &list[i]
		}
		return m
	}
	bm, am := byName(before), byName(after)
	rate := func(o *telemetry.OperationStats) float64 { return round4(float64(o.ErrorCount) / float64(o.Count)) }
	var out []diff
	names := maps.Clone(bm)
	maps.Copy(names, am)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		b, a := bm[name], am[name]
		d := diff{op: gen.AnalyzeServicePerformanceOutputComparisonOperation{Name: name}}
		switch {
		case b == nil && !beforeAll, a == nil && !afterAll:
			continue
		case b == nil:
			d.op.AfterCount, d.op.Outcome, d.rank = a.Count, gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeNew, 1
		case a == nil:
			d.op.BeforeCount, d.op.Outcome, d.rank = b.Count, gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeGone, 3
		default:
			d.op.BeforeCount, d.op.AfterCount = b.Count, a.Count
			d.op.P50, d.op.P95 = change(b.P50Ms, a.P50Ms), change(b.P95Ms, a.P95Ms)
			d.op.ErrorRate = change(rate(b), rate(a))
			moved, points := a.P95Ms-b.P95Ms, rate(a)-rate(b)
			share := 0.0
			if b.P95Ms > 0 {
				share = moved / b.P95Ms
			}
			d.move = math.Abs(moved)
			switch {
			case b.Count < fewCalls || a.Count < fewCalls:
				d.op.Outcome, d.rank = gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeFewSamples, 4
			case (share >= changedP95Share && moved >= changedP95Ms) || points >= changedErrorPoints:
				d.op.Outcome, d.rank = gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeSlower, 0
			case (share <= -changedP95Share && -moved >= changedP95Ms) || -points >= changedErrorPoints:
				d.op.Outcome, d.rank = gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeFaster, 2
			default:
				d.op.Outcome, d.rank = gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeStable, 5
			}
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(x, y diff) int {
		return cmp.Or(cmp.Compare(x.rank, y.rank), cmp.Compare(y.move, x.move))
	})
	ops := make([]gen.AnalyzeServicePerformanceOutputComparisonOperation, 0, min(len(out), maxOperationDiffs))
	for _, d := range out[:min(len(out), maxOperationDiffs)] {
		ops = append(ops, d.op)
	}
	return ops
}

// change is one before/after metric; the relative change is absent when before is 0.
func change(before, after float64) *gen.Change {
	c := &gen.Change{Before: before, After: after}
	if before != 0 {
		c.RelativeChange = ptr(round4((after - before) / before))
	}
	return c
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// maxDBOperations is the most operations one analyze_db_bottlenecks answer holds (its
// schema's maxItems), what detail full asks for.
const maxDBOperations = 20

// standardStatementRunes bounds a normalized statement in a standard answer; full shows it
// whole (normalized all the same: literals never leave).
const standardStatementRunes = 300

// shortenStatement cuts s to n runes, marking the cut.
func shortenStatement(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// AnalyzeDBBottlenecks implements gen.Flows: database operations by total time.
func (f *Flows) AnalyzeDBBottlenecks(ctx context.Context, in gen.AnalyzeDBBottlenecksInput) (gen.AnalyzeDBBottlenecksOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.AnalyzeDBBottlenecksOutput{}, err
	}
	src, err := f.source()
	if err != nil {
		return gen.AnalyzeDBBottlenecksOutput{}, err
	}
	snap, err := src.Fingerprint(ctx)
	if err != nil {
		return gen.AnalyzeDBBottlenecksOutput{}, telemetryErr(err)
	}
	offset, err := f.pageCursor(in.Cursor, gen.ToolAnalyzeDBBottlenecks, in, snap)
	if err != nil {
		return gen.AnalyzeDBBottlenecksOutput{}, err
	}
	limit := in.Limit
	if in.Detail == gen.DetailFull {
		limit = maxDBOperations // full: as many as an answer holds
	}
	rep, err := src.DBOperations(ctx, telemetry.DBQuery{Window: w, Service: deref(in.Service), System: deref(in.System), TopN: offset + limit})
	if err != nil {
		return gen.AnalyzeDBBottlenecksOutput{}, telemetryErr(err)
	}
	out := gen.AnalyzeDBBottlenecksOutput{SinceUnixMs: w.StartMs, SampleCount: rep.SampleCount,
		PercentileRelativeError: rep.PercentileError, Scan: f.scanOut(rep.Scan)}
	if len(rep.KnownSystems) > 0 {
		out.KnownSystems = rep.KnownSystems
	}
	if rep.Total == 0 && len(rep.KnownSystems) == 0 {
		why := f.whyEmpty(ctx, src, w, deref(in.Service), "database operation", false)
		if !why.Unknown && deref(in.Service) == "" {
			// The window has telemetry: say which spans look like queries the
			// conventions do not count, if any.
			if h := dbLookalikeHint(ctx, src, w); h != nil {
				why.Hint = *h
			}
		}
		out.Hint = optStr(why.Hint)
	}
	if in.Detail == gen.DetailSummary {
		out.Page = gen.Page{Returned: 0, Total: ptr(int64(rep.Total)), Truncated: rep.Total > 0}
		return out, nil
	}
	full := in.Detail == gen.DetailFull
	lo := min(offset, len(rep.Operations))
	for _, o := range rep.Operations[lo:] {
		op := gen.AnalyzeDBBottlenecksOutputOperation{
			System: optStr(o.System), Collection: optStr(o.Collection), Count: o.Count,
			TotalDurationMs: o.TotalMs, P95DurationMs: o.P95Ms, ErrorCount: o.ErrorCount, ShareOfTotal: o.ShareOfTotal,
		}
		if o.Statement != "" {
			st := o.Statement
			if !full {
				st = shortenStatement(st, standardStatementRunes)
			}
			op.Statement = &st
		}
		// The label is left out when it says no more than the statement shown (R13 falls back
		// to the statement itself when a query has no summary).
		if op.Statement == nil || *op.Statement != o.Label {
			op.Operation = &o.Label
		}
		out.Operations = append(out.Operations, op)
	}
	out.Page = f.page(gen.ToolAnalyzeDBBottlenecks, in, snap, lo, len(out.Operations), rep.Total, false)
	out.Page.Truncated = lo+len(out.Operations) < rep.Total
	f.setPaging(ctx, "operations", "", gen.ToolAnalyzeDBBottlenecks, in, snap, lo)
	return out, nil
}

// dbLookalikeHint says, for an answer without database operations, which client spans of the
// window look like database calls the conventions do not count (docs/semantics.md R13), and
// what would count them; nil when none do.
func dbLookalikeHint(ctx context.Context, src telemetry.Source, w telemetry.Window) *string {
	in, err := src.Instrumentation(ctx, telemetry.InstrumentationQuery{Window: w, NowMs: w.EndMs})
	if err != nil || in.DBLookalikes == 0 {
		return nil
	}
	h := fmt.Sprintf("no span is a database operation under the conventions, but %d client span(s) look like database calls (%s)",
		in.DBLookalikes, strings.Join(in.DBLookalikeSpans, "; "))
	if len(in.DBLookalikeKeys) > 0 {
		h += fmt.Sprintf(": add %s to conventions.db.statementKeys, and its prefix to keyPrefixes, in runlens.json", strings.Join(in.DBLookalikeKeys, ", "))
	} else {
		h += ": give them db.query.text and db.system.name, or name their statement key in conventions.db.statementKeys in runlens.json"
	}
	return ptr(h + "; the doctor tool's db_spans_recognized check says the same")
}
