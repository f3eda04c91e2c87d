package telemetry

import (
	"cmp"
	"slices"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// JobFactsOf finds the facts of a last-job question among spans (docs/semantics.md R11): of
// the job executions ordered newest first (by start, at the precision the source keeps, then
// span id; executions that tie, copies of a span, in the spans' order), the newest matching q
// and the one before it of the same job name; with none matching, the job names seen. It is
// the reference every backend's JobFacts are held to.
func JobFactsOf(conv *conventions.Conventions, spans []SpanRow, q JobQuery) JobFacts {
	type execution struct {
		span *SpanRow
		job  JobResult
	}
	var jobs []execution
	for i := range spans {
		if j, ok := JobFromSpan(conv, &spans[i]); ok {
			jobs = append(jobs, execution{&spans[i], j})
		}
	}
	slices.SortStableFunc(jobs, func(a, b execution) int {
		return cmp.Or(cmp.Compare(b.span.StartNs, a.span.StartNs), cmp.Compare(a.span.SpanID, b.span.SpanID))
	})
	var f JobFacts
	for n, x := range jobs {
		if (q.JobID != "" && x.job.JobID != q.JobID) || (q.JobName != "" && x.job.JobName != q.JobName) {
			continue
		}
		f.Newest = x.span
		for _, p := range jobs[n+1:] {
			if p.job.JobName == x.job.JobName {
				f.HasPrevious, f.PreviousStatus, f.PreviousStartMs = true, p.job.Status, p.job.StartMs
				break
			}
		}
		return f
	}
	for _, x := range jobs {
		f.Names = append(f.Names, x.job.JobName)
	}
	return f
}

// Result assembles the last-job answer from its facts: the newest matching execution read by
// JobFromSpan with the status and start of the one before it; with none, when q filters by
// job, the job names seen (sorted, at most maxHints).
func (f JobFacts) Result(conv *conventions.Conventions, q JobQuery, maxHints int) JobResult {
	if f.Newest != nil {
		j, _ := JobFromSpan(conv, f.Newest)
		if f.HasPrevious {
			j.Previous, j.PreviousStartMs = f.PreviousStatus, f.PreviousStartMs
		}
		return j
	}
	var res JobResult
	if q.JobID != "" || q.JobName != "" {
		names := slices.Clone(f.Names)
		slices.Sort(names)
		res.KnownJobs = BoundedSorted(slices.Compact(names), maxHints)
	}
	return res
}

// DurationsOf computes the duration facts of sample spans: nearest-rank percentiles over all
// of them and over each span name's (docs/semantics.md R14), and the span of their start times
// (R17). It is the reference every backend's Durations are held to.
func DurationsOf(samples []SpanRow) Durations {
	var d Durations
	if len(samples) == 0 {
		return d
	}
	all := make([]int64, 0, len(samples))
	byOp := map[string][]int64{}
	errs := map[string]int64{}
	d.FirstMs, d.LastMs = samples[0].StartNs/1e6, samples[0].StartNs/1e6
	for _, s := range samples {
		all = append(all, s.DurationNs)
		d.All.SumNs += s.DurationNs
		d.FirstMs, d.LastMs = min(d.FirstMs, s.StartNs/1e6), max(d.LastMs, s.StartNs/1e6)
		byOp[s.Name] = append(byOp[s.Name], s.DurationNs)
		if s.IsError() {
			d.All.Errors++
			errs[s.Name]++
		}
	}
	d.All.setPercentiles(Summarize(all))
	d.Operations = make([]DurationFacts, 0, len(byOp))
	for name, ds := range byOp {
		f := DurationFacts{Name: name, Errors: errs[name]}
		for _, v := range ds {
			f.SumNs += v
		}
		f.setPercentiles(Summarize(ds))
		d.Operations = append(d.Operations, f)
	}
	slices.SortFunc(d.Operations, func(a, b DurationFacts) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

func (f *DurationFacts) setPercentiles(st DurationStats) {
	f.Count, f.P50Ns, f.P95Ns, f.P99Ns = st.Count, st.P50, st.P95, st.P99
}

// Performance assembles a service's performance answer from its samples' duration facts: the
// average and percentiles in milliseconds, and the top operations ordered by p95 desc, count
// desc, name — every operation with errors kept, however low it ranks (up to
// MaxTopOperations). q.TopN is taken as given (PerformanceQuery.WithDefaults applies the
// default).
func (d Durations) Performance(q PerformanceQuery) Performance {
	p := Performance{Service: q.Service, PercentileError: d.PercentileError, Scan: d.Scan}
	if d.All.Count == 0 {
		return p
	}
	p.SampleCount, p.ErrorCount = d.All.Count, d.All.Errors
	p.AverageMs = Ms(d.All.SumNs / d.All.Count)
	p.P50Ms, p.P95Ms, p.P99Ms = Ms(d.All.P50Ns), Ms(d.All.P95Ns), Ms(d.All.P99Ns)
	p.FirstMs, p.LastMs = d.FirstMs, d.LastMs
	ops := make([]OperationStats, 0, len(d.Operations))
	for _, o := range d.Operations {
		if o.Count > 0 {
			ops = append(ops, OperationStats{Name: o.Name, Count: o.Count, ErrorCount: o.Errors, P50Ms: Ms(o.P50Ns), P95Ms: Ms(o.P95Ns)})
		}
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

// DBOperationsOf groups database operation spans by key (docs/semantics.md R13) after the
// system filter: each operation's count, errors, total time and nearest-rank p95, read as its
// first sample says, and the systems seen before the filter. It is the reference every
// backend's DBOperations are held to.
func DBOperationsOf(q DBQuery, samples []DBSample) DBOperations {
	var d DBOperations
	index := map[string]int{}
	var durations [][]int64
	systems := map[string]bool{}
	for _, s := range samples {
		systems[s.Op.System] = true
		if q.System != "" && s.Op.System != q.System {
			continue
		}
		i, ok := index[s.Op.Key]
		if !ok {
			i = len(d.Operations)
			index[s.Op.Key] = i
			d.Operations = append(d.Operations, DBOperationFacts{Op: s.Op})
			durations = append(durations, nil)
		}
		f := &d.Operations[i]
		f.Count++
		f.SumNs += s.DurationNs
		durations[i] = append(durations[i], s.DurationNs)
		if s.Error {
			f.Errors++
		}
	}
	for i := range d.Operations {
		d.Operations[i].P95Ns = Summarize(durations[i]).P95
	}
	d.Systems = Keys(systems)
	return d
}

// Report assembles the database answer from the operations' facts: each one's share of the
// total time, ordered by SortDBOperations and cut at q.TopN (DefaultDBTopN when 0), and,
// when the system filter kept nothing, the systems seen (at most maxHints).
func (d DBOperations) Report(q DBQuery, maxHints int) DBReport {
	rep := DBReport{PercentileError: d.PercentileError, Scan: d.Scan, Total: len(d.Operations)}
	var total int64
	for _, o := range d.Operations {
		rep.SampleCount += o.Count
		total += o.SumNs
	}
	for _, o := range d.Operations {
		rep.Operations = append(rep.Operations, DBOperationStats{Key: o.Op.Key, Label: o.Op.Label, Statement: o.Op.Statement,
			System: o.Op.System, Collection: o.Op.Collection, Count: o.Count, ErrorCount: o.Errors, TotalMs: Ms(o.SumNs),
			P95Ms: Ms(o.P95Ns), ShareOfTotal: Share(o.SumNs, total)})
	}
	SortDBOperations(rep.Operations)
	if n := cmp.Or(q.TopN, DefaultDBTopN); len(rep.Operations) > n {
		rep.Operations = rep.Operations[:n]
	}
	if q.System != "" && rep.SampleCount == 0 {
		systems := slices.DeleteFunc(slices.Clone(d.Systems), func(s string) bool { return s == "" })
		slices.Sort(systems)
		rep.KnownSystems = BoundedSorted(slices.Compact(systems), maxHints)
	}
	return rep
}

// SummarizeDB groups database operation spans by key into the database answer:
// DBOperationsOf's facts, reported.
func SummarizeDB(q DBQuery, samples []DBSample, maxHints int) DBReport {
	return DBOperationsOf(q, samples).Report(q, maxHints)
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

func BoundedSorted(s []string, n int) []string {
	slices.Sort(s)
	if len(s) > n {
		s = s[:n]
	}
	return s
}
