package telemetry

import (
	"cmp"
	"context"
	"slices"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// LastJob implements Source: the newest job execution in the window matching the filters, and
// the status of the same job's execution before it.
func (e *Engine) LastJob(ctx context.Context, q JobQuery) (JobResult, error) {
	if c, ok := capability[JobFinder](e); ok {
		j, handled, err := c.FindLastJob(ctx, q, e.ask())
		if err != nil || handled {
			return j, err
		}
	}
	if len(e.conv.JobKeys.IDKeys) == 0 {
		return JobResult{}, nil
	}
	b, err := e.scanSpans(ctx, SpanScan{Window: q.Window, Service: q.Service, AttrKeys: e.conv.JobKeys.IDKeys, Fields: FieldAttributes | FieldEvents})
	if err != nil {
		return JobResult{}, err
	}
	jobs := make([]JobResult, 0, len(b.Spans))
	spanIDs := make([]string, 0, len(b.Spans))
	starts := make([]int64, 0, len(b.Spans))
	for i := range b.Spans {
		if j, ok := JobFromSpan(e.conv, &b.Spans[i]); ok {
			jobs = append(jobs, j)
			spanIDs, starts = append(spanIDs, b.Spans[i].SpanID), append(starts, b.Spans[i].StartNs)
		}
	}
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	// Newest start first, at the precision the source keeps (a job run faster than a
	// millisecond after another is still the later one), then span id. Stable: executions
	// that tie (duplicates of a span) keep the order of the scan.
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(starts[b], starts[a]), cmp.Compare(spanIDs[a], spanIDs[b]))
	})
	return PickLastJob(jobs, idx, q, e.limits.MaxHints), nil
}

// PickLastJob chooses, from jobs ordered newest first by idx, the newest matching q and the
// previous execution of the same job name; with none matching, it names the known jobs.
func PickLastJob(jobs []JobResult, idx []int, q JobQuery, maxHints int) JobResult {
	for n, i := range idx {
		j := jobs[i]
		if (q.JobID != "" && j.JobID != q.JobID) || (q.JobName != "" && j.JobName != q.JobName) {
			continue
		}
		for _, p := range idx[n+1:] {
			if jobs[p].JobName == j.JobName {
				j.Previous, j.PreviousStartMs = jobs[p].Status, jobs[p].StartMs
				break
			}
		}
		return j
	}
	res := JobResult{}
	if q.JobID != "" || q.JobName != "" {
		seen := map[string]bool{}
		for _, i := range idx {
			if n := jobs[i].JobName; !seen[n] {
				seen[n] = true
				res.KnownJobs = append(res.KnownJobs, n)
			}
		}
		slices.Sort(res.KnownJobs)
		if len(res.KnownJobs) > maxHints {
			res.KnownJobs = res.KnownJobs[:maxHints]
		}
	}
	return res
}

// ServicePerformance implements Source: latency and errors over the service's entry spans
// (with an operation: over that operation's spans, entry or not).
func (e *Engine) ServicePerformance(ctx context.Context, q PerformanceQuery) (Performance, error) {
	q = q.withDefaults()
	if c, ok := capability[PerformanceAggregator](e, q.Invocation); ok {
		p, handled, err := c.AggregatePerformance(ctx, q, e.ask())
		if err != nil || handled {
			return p, err
		}
	}
	b, err := e.scanSpans(ctx, SpanScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return Performance{}, err
	}
	limited := b.Limited
	var samples []SpanRow
	entryNames := map[string]bool{}
	if q.Operation != "" {
		for _, s := range b.Spans {
			if s.Name == q.Operation {
				samples = append(samples, s)
			}
		}
	}
	if q.Operation == "" || len(samples) == 0 {
		entries, lim, err := e.entrySpans(ctx, b.Spans)
		if err != nil {
			return Performance{}, err
		}
		limited = limited || lim
		for _, s := range entries {
			entryNames[s.Name] = true
		}
		if q.Operation == "" {
			samples = entries
		}
	}
	p := SummarizePerformance(q, samples)
	p.Scan = windowScan(q.Window)
	p.Scan.Scanned, p.Scan.Limited = b.Scanned, limited
	if q.Operation != "" && len(samples) == 0 {
		p.KnownOperations = boundedSorted(keys(entryNames), e.limits.MaxHints)
	}
	return p, nil
}

// entrySpans keeps the entry spans among the window's spans, by ShapeTrace's rule: a span is
// not an entry when a span carrying its parent's id belongs to its service. Parents among the
// spans themselves answer most; the traces of the others are fetched.
func (e *Engine) entrySpans(ctx context.Context, spans []SpanRow) ([]SpanRow, bool, error) {
	// (trace, span id, service) of every known span: of the window, then of fetched traces.
	known := make(map[[3]string]bool, len(spans))
	for _, s := range spans {
		known[[3]string{s.TraceID, s.SpanID, s.Service}] = true
	}
	hasParent := func(s *SpanRow) bool {
		return s.ParentSpanID != "" && s.ParentSpanID != s.SpanID
	}
	var unknown []string
	for i := range spans {
		s := &spans[i]
		if !IsEntryKind(s.Kind) && hasParent(s) && !known[[3]string{s.TraceID, s.ParentSpanID, s.Service}] {
			unknown = append(unknown, s.TraceID)
		}
	}
	limited := false
	if len(unknown) > 0 {
		traces, lim, _, err := e.traceSpans(ctx, sortedUnique(unknown), false, 0, 0)
		if err != nil {
			return nil, false, err
		}
		limited = lim
		for t, ss := range traces {
			for _, s := range ss {
				known[[3]string{t, s.SpanID, s.Service}] = true
			}
		}
	}
	out := make([]SpanRow, 0, len(spans))
	for i := range spans {
		s := &spans[i]
		if IsEntryKind(s.Kind) || !hasParent(s) || !known[[3]string{s.TraceID, s.ParentSpanID, s.Service}] {
			out = append(out, *s)
		}
	}
	return out, limited, nil
}

// SummarizePerformance computes a service's statistics from its sample spans: nearest-rank
// percentiles over all of them, and the top operations ordered by p95 desc, count desc, name —
// every operation with errors kept, however low it ranks (up to MaxTopOperations). q.TopN is
// taken as given: the engine applied its default before a capability computes with it.
func SummarizePerformance(q PerformanceQuery, samples []SpanRow) Performance {
	p := Performance{Service: q.Service}
	if len(samples) == 0 {
		return p
	}
	all := make([]int64, 0, len(samples))
	byOp := map[string][]int64{}
	errs := map[string]int64{}
	var sum int64
	p.FirstMs, p.LastMs = samples[0].StartNs/1e6, samples[0].StartNs/1e6
	for _, s := range samples {
		all = append(all, s.DurationNs)
		sum += s.DurationNs
		p.FirstMs, p.LastMs = min(p.FirstMs, s.StartNs/1e6), max(p.LastMs, s.StartNs/1e6)
		byOp[s.Name] = append(byOp[s.Name], s.DurationNs)
		if s.IsError() {
			p.ErrorCount++
			errs[s.Name]++
		}
	}
	st := Summarize(all)
	p.SampleCount = st.Count
	p.AverageMs = Ms(sum / int64(len(all)))
	p.P50Ms, p.P95Ms, p.P99Ms = Ms(st.P50), Ms(st.P95), Ms(st.P99)
	ops := make([]OperationStats, 0, len(byOp))
	for name, ds := range byOp {
		os := Summarize(ds)
		ops = append(ops, OperationStats{Name: name, Count: os.Count, ErrorCount: errs[name], P50Ms: Ms(os.P50), P95Ms: Ms(os.P95)})
	}
	p.TopOperations = TopOperations(ops, q.TopN)
	return p
}

// MaxTopOperations bounds topOperations even when more operations have errors.
const MaxTopOperations = 20

// TopOperations orders ops by p95 desc, count desc, name and keeps the first n — except that
// an operation with errors is never left out: it takes the place of the lowest-ranked one
// without errors, or, when every kept one has errors, is added (at most MaxTopOperations).
func TopOperations(ops []OperationStats, n int) []OperationStats {
	order := func(a, b OperationStats) int {
		return cmp.Or(cmp.Compare(b.P95Ms, a.P95Ms), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(ops, order)
	n = min(n, len(ops))
	out := slices.Clone(ops[:n])
	for _, o := range ops[n:] {
		if o.ErrorCount == 0 {
			continue
		}
		drop := -1
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].ErrorCount == 0 {
				drop = i
				break
			}
		}
		switch {
		case drop >= 0:
			out = slices.Delete(out, drop, drop+1)
		case len(out) >= MaxTopOperations:
			continue
		}
		out = append(out, o)
	}
	slices.SortFunc(out, order)
	return out
}

// DBOperations implements Source: the window's database operations (one system and one
// normalized statement each), by total time.
func (e *Engine) DBOperations(ctx context.Context, q DBQuery) (DBReport, error) {
	q = q.withDefaults()
	if c, ok := capability[DBAggregator](e); ok {
		r, handled, err := c.AggregateDB(ctx, q, e.ask())
		if err != nil || handled {
			return r, err
		}
	}
	b, err := e.scanSpans(ctx, SpanScan{Window: q.Window, Service: q.Service, AttrKeys: DBAttrKeys(e.conv), Fields: FieldAttributes})
	if err != nil {
		return DBReport{}, err
	}
	var ops []DBSample
	for i := range b.Spans {
		s := &b.Spans[i]
		op, ok := DBOperationOf(e.conv, s)
		if !ok {
			continue
		}
		ops = append(ops, DBSample{Op: op, DurationNs: s.DurationNs, Error: s.IsError()})
	}
	rep := SummarizeDB(q, ops, e.limits.MaxHints)
	rep.Scan = windowScan(q.Window)
	rep.Scan.Scanned, rep.Scan.Limited = b.Scanned, b.Limited
	return rep, nil
}

// DBAttrKeys are the attribute keys (prefixes, ending in ".") a database operation span
// carries a non-empty value under: what DBOperations scans for.
func DBAttrKeys(conv *conventions.Conventions) []string { return prefixKeys(conv.DBKeys.KeyPrefixes) }

// DBOperationOf reads the database operation of a span (with attributes) as DBOperations
// counts it: a span with a non-empty attribute under DBAttrKeys that the conventions read as
// an operation. Backends that precompute operations call it, so they count the same spans.
func DBOperationOf(conv *conventions.Conventions, s *SpanRow) (conventions.DBOperation, bool) {
	scan := SpanScan{AttrKeys: DBAttrKeys(conv)}
	if !MatchSpan(&scan, s) {
		return conventions.DBOperation{}, false
	}
	return conv.DBOperation(s.Name, s.Attributes)
}

// DBSample is one database operation span.
type DBSample struct {
	Op         conventions.DBOperation
	DurationNs int64
	Error      bool
}

// SummarizeDB groups database operation spans by key and computes their statistics, ordered
// by total time desc, p95 desc, label; with a system filter that matched nothing, it names the
// systems seen. q.TopN is taken as given, as in SummarizePerformance.
func SummarizeDB(q DBQuery, samples []DBSample, maxHints int) DBReport {
	var rep DBReport
	type agg struct {
		stats DBOperationStats
		ds    []int64
		sum   int64
	}
	groups := map[string]*agg{}
	systems := map[string]bool{}
	var total int64
	for _, s := range samples {
		systems[s.Op.System] = true
		if q.System != "" && s.Op.System != q.System {
			continue
		}
		rep.SampleCount++
		total += s.DurationNs
		g := groups[s.Op.Key]
		if g == nil {
			g = &agg{stats: DBOperationStats{Key: s.Op.Key, Label: s.Op.Label, Statement: s.Op.Statement, System: s.Op.System, Collection: s.Op.Collection}}
			groups[s.Op.Key] = g
		}
		g.stats.Count++
		g.sum += s.DurationNs
		g.ds = append(g.ds, s.DurationNs)
		if s.Error {
			g.stats.ErrorCount++
		}
	}
	for _, g := range groups {
		st := Summarize(g.ds)
		g.stats.TotalMs = Ms(g.sum)
		g.stats.P95Ms = Ms(st.P95)
		g.stats.ShareOfTotal = Share(g.sum, total)
		rep.Operations = append(rep.Operations, g.stats)
	}
	SortDBOperations(rep.Operations)
	rep.Total = len(rep.Operations)
	if len(rep.Operations) > q.TopN {
		rep.Operations = rep.Operations[:q.TopN]
	}
	if q.System != "" && rep.SampleCount == 0 {
		delete(systems, "")
		rep.KnownSystems = boundedSorted(keys(systems), maxHints)
	}
	return rep
}

// SortDBOperations orders operations by total time desc, p95 desc, label, key.
func SortDBOperations(ops []DBOperationStats) {
	slices.SortFunc(ops, func(a, b DBOperationStats) int {
		return cmp.Or(cmp.Compare(b.TotalMs, a.TotalMs), cmp.Compare(b.P95Ms, a.P95Ms), cmp.Compare(a.Label, b.Label), cmp.Compare(a.Key, b.Key))
	})
}

// prefixKeys turns key prefixes into AttrKeys prefixes (ending in ".").
func prefixKeys(prefixes []string) []string {
	out := make([]string, 0, len(prefixes))
	for _, p := range prefixes {
		if p != "" && p[len(p)-1] != '.' {
			p += "."
		}
		out = append(out, p)
	}
	return out
}

func boundedSorted(s []string, n int) []string {
	slices.Sort(s)
	if len(s) > n {
		s = s[:n]
	}
	return s
}
