package telemetry

import (
	"cmp"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// RunFromRoot reads a run off its root span (with attributes): its id is the root's execution
// id, else the trace id; its name the job name, else the root's name; its outcome the
// application's own word (job status, else outcome attribute). Its status is the root's own
// verdict (docs/semantics.md R5): that word normalized, else the exit code, else the root's
// status Error, else an HTTP server response of 500 or above; anything that failed below the
// root without reaching it is a handled error of an ok run, never a failed run. SpanCount and
// ErrorCount are left to the caller.
func RunFromRoot(conv *conventions.Conventions, root *SpanRow) RunSummary {
	r := RunSummary{
		ID:          cmp.Or(conv.ExecutionID(root.Attributes), root.TraceID),
		Domain:      conv.Domain(root.Attributes),
		Name:        root.Name,
		StartMs:     NsToMs(root.StartNs),
		DurationMs:  Ms(root.DurationNs),
		HasDuration: true,
		Service:     ServiceOf(root.Service),
		TraceID:     root.TraceID,
	}
	var word string
	var exit *int64
	if job, ok := conv.Job(root.Attributes); ok {
		r.Name = cmp.Or(job.Name, root.Name)
		word, exit = job.Status, job.ExitCode
		r.Outcome = job.Outcome()
	} else {
		// A run that is not a job may still say how it ended (a pipeline result).
		word = firstAttr(root.Attributes, conv.JobKeys.StatusKeys)
		r.Outcome = cmp.Or(word, firstAttr(root.Attributes, conv.JobKeys.OutcomeKeys))
	}
	r.Status = conv.NormalizeStatus(word, SpanFailed(root), exit)
	return r
}

// SpanFailed is a span's own verdict (docs/semantics.md R5): its status is Error, or it
// served an HTTP request whose response was a server error (500 or above; a 4xx is the
// client's error, not the server's, in OpenTelemetry's HTTP conventions). An instrumentation
// that leaves the status unset on a 500 still fails its run.
func SpanFailed(s *SpanRow) bool {
	if s.IsError() {
		return true
	}
	if s.Kind != KindServer {
		return false
	}
	code, ok := conventions.ParseExitCode(firstAttr(s.Attributes, conventions.HTTPStatusKeys))
	return ok && code >= 500 && code <= 599
}

// JobFromSpan reads a job execution off a span with a job id (with attributes); ok is false
// for any other span. Its status is normalized like a run's, over the span's own status.
func JobFromSpan(conv *conventions.Conventions, s *SpanRow) (JobResult, bool) {
	job, ok := conv.Job(s.Attributes)
	if !ok {
		return JobResult{}, false
	}
	msg := ""
	if s.IsError() {
		msg, _ = SpanError(s)
	}
	return JobResult{
		Found:        true,
		JobName:      cmp.Or(job.Name, s.Name),
		JobID:        job.ID,
		Status:       conv.NormalizeStatus(job.Status, s.IsError(), job.ExitCode),
		Outcome:      job.Outcome(),
		ExitCode:     job.ExitCode,
		StartMs:      NsToMs(s.StartNs),
		CompletedMs:  NsToMs(s.EndNs()),
		DurationMs:   Ms(s.DurationNs),
		ErrorMessage: msg,
		TraceID:      s.TraceID,
	}, true
}

func firstAttr(attrs conventions.Attributes, keys []string) string {
	for _, k := range keys {
		if v := attrs[k]; v != "" {
			return v
		}
	}
	return ""
}
