package flows

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/toolerr"
)

// GetAppStatus implements gen.Flows: counts over the window and a verdict. An unreachable
// source is an answer (source.reachable false, status warn), not an error, so the agent sees
// why there is no data.
func (f *Flows) GetAppStatus(ctx context.Context, in gen.GetAppStatusInput) (gen.GetAppStatusOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.GetAppStatusOutput{}, err
	}
	src, err := f.source()
	if err != nil {
		return gen.GetAppStatusOutput{}, err
	}
	info := src.Describe(ctx)
	out := gen.GetAppStatusOutput{Source: gen.GetAppStatusOutputSource{
		Kind: gen.SourceKind(info.Kind), Endpoint: optStr(info.Endpoint), Reachable: info.Reachable,
	}}
	if info.NewestDataMs > 0 {
		out.Source.NewestDataUnixMs = ptr(info.NewestDataMs)
	}
	out.Source.Note = optStr(info.Note)
	if f.Receivers != nil {
		out.Source.Receivers = f.Receivers(ctx)
	}
	q := telemetry.StatusQuery{Window: w, Service: deref(in.Service)}
	if in.Detail == gen.DetailFull {
		q.MaxServices = maxStatusServices
	}
	st, err := src.Status(ctx, q)
	if err != nil {
		if errors.Is(err, telemetry.ErrUnreachable) {
			out.Source.Reachable = false
			out.Status = gen.GetAppStatusOutputStatusWarn
			out.Hint = ptr("the telemetry source did not answer: run the doctor tool")
			out.Scan = f.scanOut(telemetry.Scan{WindowStartMs: w.StartMs, WindowEndMs: w.EndMs})
			return out, nil
		}
		return gen.GetAppStatusOutput{}, telemetryErr(err)
	}
	out.Status = gen.GetAppStatusOutputStatus(telemetry.Verdict(st))
	if st.Spans == 0 && st.Logs == 0 {
		// Silence is a warning for an app that exists; a service that sent nothing ever is
		// not a quiet service but a wrong name.
		why := f.whyEmpty(ctx, src, w, deref(in.Service), "telemetry", false)
		if why.Unknown {
			out.Status, out.KnownServices = gen.GetAppStatusOutputStatusUnknown, why.Known
		}
		out.Hint = optStr(why.Hint)
	}
	out.Counts = gen.GetAppStatusOutputCounts{Services: st.Services, Spans: st.Spans, Logs: st.Logs, Errors: st.Errors, HandledErrors: st.HandledErrors}
	out.Scan = f.scanOut(st.Scan)
	if in.Detail == gen.DetailSummary {
		return out, nil
	}
	for _, d := range st.Domains {
		od := gen.GetAppStatusOutputDomain{Domain: d.Domain, SeenCount: d.SeenCount, ErrorCount: d.ErrorCount}
		if d.MostRecentMs > 0 {
			od.MostRecentActivityUnixMs = ptr(d.MostRecentMs)
		}
		out.Domains = append(out.Domains, od)
	}
	for _, s := range st.ServiceActivity {
		out.Services = append(out.Services, gen.GetAppStatusOutputService{
			Service: s.Service, Spans: s.Spans, Errors: s.Errors, LastSeenUnixMs: s.LastSeenMs,
		})
	}
	return out, nil
}

// With detail full, an answer holds as many items as its schema allows (maxItems) rather
// than the standard bounds: the services of get_app_status, the runs of a list_runs page.
const (
	maxStatusServices = 50
	maxRunsPage       = 100
)

// ListRuns implements gen.Flows: one page of runs, newest first.
func (f *Flows) ListRuns(ctx context.Context, in gen.ListRunsInput) (gen.ListRunsOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.ListRunsOutput{}, err
	}
	src, err := f.source()
	if err != nil {
		return gen.ListRunsOutput{}, err
	}
	snap, err := src.Fingerprint(ctx)
	if err != nil {
		return gen.ListRunsOutput{}, telemetryErr(err)
	}
	offset, err := f.pageCursor(in.Cursor, gen.ToolListRuns, in, snap)
	if err != nil {
		return gen.ListRunsOutput{}, err
	}
	limit := in.Limit
	switch in.Detail {
	case gen.DetailSummary:
		limit = 1 // only the total is reported; read as little as possible
	case gen.DetailFull:
		limit = maxRunsPage // full: as many as a page holds
	}
	page, err := src.Runs(ctx, telemetry.RunsQuery{
		Window: w, Service: deref(in.Service), Domain: deref(in.Domain), Status: derefStatus(in.Status), Invocation: deref(in.Invocation),
		Offset: offset, Limit: limit, AsOf: snap.AsOf,
	})
	if err != nil {
		return gen.ListRunsOutput{}, telemetryErr(err)
	}
	out := gen.ListRunsOutput{Scan: f.scanOut(page.Scan)}
	if page.Total == 0 && len(page.EnteredAt) == 0 {
		out.Hint = optStr(f.whyEmpty(ctx, src, w, deref(in.Service), "run", false).Hint)
	}
	if len(page.EnteredAt) > 0 {
		out.Hint = ptr(fmt.Sprintf("no run entered at service %q in the window: a run belongs to the service where it entered, "+
			"and the runs holding its spans entered at %s; call list_runs with service=%q", deref(in.Service),
			strings.Join(page.EnteredAt, ", "), page.EnteredAt[0]))
	}
	if in.Detail == gen.DetailSummary {
		out.Page = gen.Page{Returned: 0, Total: ptr(int64(page.Total)), Truncated: page.Total > 0}
		out.Count = int64(page.Total)
		return out, nil
	}
	for _, r := range page.Runs {
		run := gen.ListRunsOutputRun{
			ID: r.ID, Domain: r.Domain, Name: r.Name, Status: gen.RunStatus(r.Status), Outcome: optStr(r.Outcome),
			StartUnixMs: r.StartMs, Service: r.Service, TraceID: unlessEqual(r.TraceID, r.ID),
			SpanCount: ptr(r.SpanCount), ErrorCount: ptr(r.ErrorCount),
		}
		if r.HasDuration {
			run.DurationMs = ptr(r.DurationMs)
		}
		out.Runs = append(out.Runs, run)
	}
	out.Page = f.page(gen.ToolListRuns, in, snap, offset, len(out.Runs), page.Total, false)
	out.Count = out.Page.Returned
	f.setPaging(ctx, "runs", "count", gen.ToolListRuns, in, snap, offset)
	return out, nil
}

// GetRun implements gen.Flows: one run as a depth-first span tree with its logs.
func (f *Flows) GetRun(ctx context.Context, in gen.GetRunInput) (gen.GetRunOutput, error) {
	src, err := f.source()
	if err != nil {
		return gen.GetRunOutput{}, err
	}
	maxSpans, maxDepth := in.MaxSpans, in.MaxDepth
	full := in.Detail == gen.DetailFull
	run, err := src.Run(ctx, telemetry.RunQuery{ID: in.ID, WithAttributes: full})
	if lower := strings.ToLower(in.ID); errors.Is(err, telemetry.ErrRunNotFound) && lower != in.ID && isHex(in.ID) {
		// Trace ids are hex, stored in lower case (W3C Trace Context); an id copied from a log
		// line or a dashboard may be upper case. An execution id keeps its case.
		run, err = src.Run(ctx, telemetry.RunQuery{ID: lower, WithAttributes: full})
	}
	if errors.Is(err, telemetry.ErrRunNotFound) {
		return gen.GetRunOutput{}, toolerr.Newf(gen.ErrorCodeRunNotFound, "no run or trace has the id %q", in.ID).
			WithHint("call list_runs to find run ids, or get_recent_errors for runs that failed")
	}
	if err != nil {
		return gen.GetRunOutput{}, telemetryErr(err)
	}
	out := gen.GetRunOutput{
		ID: run.ID, TraceID: unlessEqual(run.TraceID, run.ID), Status: gen.RunStatus(run.Status), Summary: runSentence(run),
		Outcome: optStr(run.Outcome), ErrorMessage: optStr(run.ErrorMessage),
		Scan: gen.Scan{Limited: run.Limited, Scanned: int64(len(run.Spans) + len(run.Logs)), Note: optStr(telemetry.CoverageNote(f.Telemetry))},
	}
	spanTotal := max(run.SpanTotal, int64(len(run.Spans)))
	if len(run.Spans) > 0 {
		first, last := run.Spans[0].StartNs, run.Spans[0].StartNs+run.Spans[0].DurationNs
		for _, s := range run.Spans {
			first, last = min(first, s.StartNs), max(last, s.StartNs+s.DurationNs)
		}
		out.Scan.WindowStartUnixMs, out.Scan.WindowEndUnixMs = first/1e6, last/1e6+1
	}
	if run.HasDuration {
		out.DurationMs = ptr(run.DurationMs)
	}
	tree, cut := telemetry.Tree(run.Spans, maxSpans, maxDepth)
	omitted := int64(cut) + spanTotal - int64(len(run.Spans)) // spans past the read cap were never read
	out.OmittedSpans = omitted
	if in.Detail == gen.DetailSummary {
		out.OmittedSpans = spanTotal
		out.Page = gen.Page{Returned: 0, Total: ptr(spanTotal), Truncated: spanTotal > 0}
		out.Page.Truncated = f.boundRun(&out) || out.Page.Truncated
		return out, nil
	}
	proj, frames := f.project(ctx), standardFrames
	if full {
		frames = fullFrames
	}
	// failedAt is where the run failed in the project: the location of the error span that
	// carries the run's error message, else of the first error span with one.
	failedAt, failedAtOrigin := "", false
	eventBudget := maxRunEvents
	for _, s := range tree {
		sp := gen.GetRunOutputSpan{
			SpanID: s.SpanID, ParentSpanID: optStr(s.ParentSpanID), Name: s.Name, Service: s.Service,
			DurationMs: ptr(telemetry.Ms(s.DurationNs)), Status: gen.GetRunOutputSpanStatus(s.Status),
			Depth: s.Depth, ErrorMessage: optStr(s.ErrorMessage),
		}
		if full && len(s.Attributes) > 0 {
			sp.Attributes = s.Attributes
		}
		if full {
			var omitted int64
			if sp.Events, omitted = spanEvents(s.Events, &eventBudget); omitted > 0 {
				sp.OmittedEvents = ptr(omitted)
			}
		}
		if s.Failure != nil {
			loc, fr := f.locateSpan(proj, s.Failure, frames)
			sp.Location, sp.Frames = optStr(loc), fr
			if loc != "" && (failedAt == "" || (s.ErrorMessage == run.ErrorMessage && !failedAtOrigin)) {
				failedAt, failedAtOrigin = loc, s.ErrorMessage == run.ErrorMessage
			}
		}
		out.Spans = append(out.Spans, sp)
	}
	if failedAt != "" && run.ErrorMessage != "" {
		out.Summary = fmt.Sprintf("%s failed at %s: %s", run.Name, failedAt, run.ErrorMessage)
	}
	out.CriticalPath = criticalPath(run.Spans)
	for _, l := range run.Logs {
		out.Logs = append(out.Logs, gen.GetRunOutputLog{
			TimeUnixMs: l.TimeMs, Severity: l.Severity, Message: l.Message, SpanID: optStr(l.SpanID),
		})
	}
	out.Page = gen.Page{Returned: int64(len(out.Spans)), Total: ptr(spanTotal), Truncated: omitted > 0 || run.Limited}
	out.Page.Truncated = f.boundRun(&out) || out.Page.Truncated
	callctx.SetPaging(ctx, &shape.Paging{Field: "spans", Omitted: "omittedSpans"})
	return out, nil
}

// isHex reports whether s is a non-empty string of hexadecimal digits.
func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return s != ""
}

// criticalPath is the run's critical path with each span named, so that it reads whole even
// when maxSpans or maxDepth left its spans out of the tree.
func criticalPath(spans []telemetry.Span) []gen.GetRunOutputCriticalPathItem {
	ids := telemetry.CriticalPath(spans)
	if len(ids) == 0 {
		return nil
	}
	byID := make(map[string]*telemetry.Span, len(spans))
	for i := range spans {
		if _, dup := byID[spans[i].SpanID]; !dup {
			byID[spans[i].SpanID] = &spans[i]
		}
	}
	path := make([]gen.GetRunOutputCriticalPathItem, 0, len(ids))
	for _, id := range ids {
		s := byID[id]
		path = append(path, gen.GetRunOutputCriticalPathItem{SpanID: s.SpanID, Name: s.Name, Service: s.Service, DurationMs: telemetry.Ms(s.DurationNs)})
	}
	return path
}

// runSentence is get_run's one-sentence summary: the first error, else the outcome, else a
// neutral description.
func runSentence(r telemetry.Run) string {
	switch {
	case r.ErrorMessage != "":
		return fmt.Sprintf("%s failed: %s", r.Name, r.ErrorMessage)
	case r.Outcome != "":
		return fmt.Sprintf("%s ended %s (%s).", r.Name, r.Outcome, r.Status)
	default:
		return fmt.Sprintf("%s ran %d spans in service %s and ended %s.", r.Name, max(r.SpanTotal, int64(len(r.Spans))), r.Service, r.Status)
	}
}

// GetRecentErrors implements gen.Flows: error groups, most recent first, one page.
func (f *Flows) GetRecentErrors(ctx context.Context, in gen.GetRecentErrorsInput) (gen.GetRecentErrorsOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.GetRecentErrorsOutput{}, err
	}
	src, err := f.source()
	if err != nil {
		return gen.GetRecentErrorsOutput{}, err
	}
	snap, err := src.Fingerprint(ctx)
	if err != nil {
		return gen.GetRecentErrorsOutput{}, telemetryErr(err)
	}
	offset, err := f.pageCursor(in.Cursor, gen.ToolGetRecentErrors, in, snap)
	if err != nil {
		return gen.GetRecentErrorsOutput{}, err
	}
	// Only the page's groups are shown in full (a summary shows none): a source need not settle
	// the samples and related ids of the others.
	settle := offset + in.Limit
	if in.Detail == gen.DetailSummary {
		settle = 1
	}
	rep, err := src.Errors(ctx, telemetry.ErrorsQuery{Window: w, Service: deref(in.Service), Domain: deref(in.Domain), AsOf: snap.AsOf,
		Invocation: deref(in.Invocation), Settle: settle})
	if err != nil {
		return gen.GetRecentErrorsOutput{}, telemetryErr(err)
	}
	out := gen.GetRecentErrorsOutput{Count: rep.Events, Scan: f.scanOut(rep.Scan)}
	if len(rep.Groups) == 0 {
		// No error is good news only when there was telemetry to have errors in.
		out.Hint = optStr(f.whyEmpty(ctx, src, w, deref(in.Service), "error", true).Hint)
	}
	total := len(rep.Groups)
	if in.Detail == gen.DetailSummary {
		out.Page = gen.Page{Returned: 0, Total: ptr(int64(total)), Truncated: total > 0}
		return out, nil
	}
	limit := in.Limit
	lo := min(offset, total)
	page := rep.Groups[lo:min(lo+limit, total)]
	locs, snippets := f.locateGroups(ctx, src, page, in.Detail == gen.DetailFull)
	for i, g := range page {
		out.Groups = append(out.Groups, gen.GetRecentErrorsOutputGroup{
			Service: g.Service, Domain: g.Domain, Count: g.Count,
			FirstSeenUnixMs: g.FirstSeenMs, LastSeenUnixMs: g.LastSeenMs,
			SampleMessage: g.SampleMessage, Fingerprint: g.Fingerprint, ExceptionType: optStr(g.ExceptionType),
			RelatedRunIDs: g.RunIDs, RelatedTraceIDs: unlessSame(g.TraceIDs, g.RunIDs), Handled: g.Handled, EntryServices: g.EntryServices,
			Location: optStr(locs[i]), Snippet: optStr(snippets[i]),
		})
	}
	out.Page = f.page(gen.ToolGetRecentErrors, in, snap, lo, len(out.Groups), total, false)
	f.setPaging(ctx, "groups", "", gen.ToolGetRecentErrors, in, snap, lo)
	return out, nil
}

// GetLastJobResult implements gen.Flows: {found: false} when no job matches, with the jobs
// seen in the window when a job filter matched none of them.
func (f *Flows) GetLastJobResult(ctx context.Context, in gen.GetLastJobResultInput) (gen.GetLastJobResultOutput, error) {
	w, err := f.resolveWindow(in.Window, in.SinceUnixMs)
	if err != nil {
		return gen.GetLastJobResultOutput{}, err
	}
	src, err := f.source()
	if err != nil {
		return gen.GetLastJobResultOutput{}, err
	}
	j, err := src.LastJob(ctx, telemetry.JobQuery{Window: w, JobID: deref(in.JobID), JobName: deref(in.JobName), Service: deref(in.Service)})
	if err != nil {
		return gen.GetLastJobResultOutput{}, telemetryErr(err)
	}
	if !j.Found {
		out := gen.GetLastJobResultOutput{Found: false}
		if in.Service != nil {
			if why := f.whyEmpty(ctx, src, w, *in.Service, "job", true); why.Unknown {
				return gen.GetLastJobResultOutput{Found: false, Hint: &why.Hint}, nil
			}
		}
		if len(j.KnownJobs) > 0 {
			out.KnownJobs = j.KnownJobs
			out.Hint = ptr("no job matched; jobs seen in the window: " + strings.Join(j.KnownJobs, ", "))
		}
		return out, nil
	}
	out := gen.GetLastJobResultOutput{
		Found: true, JobName: ptr(j.JobName), JobID: ptr(j.JobID), Status: ptr(gen.RunStatus(j.Status)), Outcome: optStr(j.Outcome),
		StartUnixMs: ptr(j.StartMs), CompletedUnixMs: ptr(j.CompletedMs), DurationMs: ptr(j.DurationMs),
		ErrorMessage: optStr(j.ErrorMessage), TraceID: ptr(j.TraceID),
	}
	if j.ExitCode != nil {
		out.ExitCode = ptr(int(*j.ExitCode))
	}
	if j.Previous != "" {
		out.Previous = &gen.GetLastJobResultOutputPrevious{Status: gen.RunStatus(j.Previous), StartUnixMs: j.PreviousStartMs}
	}
	return out, nil
}
