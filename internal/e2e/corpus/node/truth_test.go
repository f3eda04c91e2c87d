package node

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cause is one reason a run failed (or an error was handled), as the workload caused it; each
// is one error group in a correct answer.
type Cause struct {
	// Key names the cause in failure messages.
	Key string
	// Message is the specific text a correct answer carries, e.g. `relation "missing_table"
	// does not exist`; Generic is text that must not stand in for it.
	Message, Generic string
	// Domain is the domain of the runs it happens in.
	Domain string
	// Handled causes happen in runs that end ok.
	Handled bool
	// Throw is the line of the app's own source that raises it ("" when the error comes
	// from a library with no frame of the app's on its stack): the expected location.
	Throw string
}

// Request is one HTTP request the workload sent, and what came back.
type Request struct {
	Route   string
	Status  int
	TraceID string
	// Cause is the failure it produced on purpose: a 5xx's reason, or the handled error of a
	// request that still succeeded; nil when nothing went wrong.
	Cause *Cause
	Took  time.Duration
}

// JobRun is one run of the app's background job.
type JobRun struct {
	ID, Name, Status, TraceID string
	Cause                     *Cause
}

// Truth is what the workload did to one app, counted by the workload: what it sent, what came
// back, and what the app logged about it.
type Truth struct {
	Service string
	// Requests holds every request, in the order sent.
	Requests []Request
	Jobs     []JobRun
	// Causes lists every cause the app was driven into.
	Causes []*Cause
	// SlowStatement is a fragment of the statement the slow route runs; SlowRoute that
	// route; DBSystem the database system's name as the instrumentation reports it.
	SlowStatement, SlowRoute string
	DBSystems                []string

	problems []string
}

// Runs is every request and job run: each is a trace of its own.
func (t *Truth) Runs() int { return len(t.Requests) + len(t.Jobs) }

// FailedRuns is the trace id of every run that failed: 5xx requests and failed job runs.
func (t *Truth) FailedRuns() []string {
	var out []string
	for _, r := range t.Requests {
		if r.Status >= 500 {
			out = append(out, r.TraceID)
		}
	}
	for _, j := range t.Jobs {
		if j.Cause != nil {
			out = append(out, j.TraceID)
		}
	}
	slices.Sort(out)
	return out
}

// FailedRequests counts 5xx answers.
func (t *Truth) FailedRequests() int {
	n := 0
	for _, r := range t.Requests {
		if r.Status >= 500 {
			n++
		}
	}
	return n
}

// ClientErrors counts 4xx answers: the caller's mistake, not a server error.
func (t *Truth) ClientErrors() int {
	n := 0
	for _, r := range t.Requests {
		if r.Status >= 400 && r.Status < 500 {
			n++
		}
	}
	return n
}

// FailedJobs counts failed job runs.
func (t *Truth) FailedJobs() int {
	n := 0
	for _, j := range t.Jobs {
		if j.Cause != nil {
			n++
		}
	}
	return n
}

// Handled counts handled errors: requests that succeeded although an error happened in them.
func (t *Truth) Handled() int { return len(t.RunsOf(nil, true)) }

// Occurrences is one per cause per run: every failed run has one cause, every handled
// error's run one handled cause.
func (t *Truth) Occurrences() int { return len(t.FailedRuns()) + t.Handled() }

// RunsOf is the trace ids of the runs with cause c (every cause when c is nil) that are
// handled (handled true) or failed (false).
func (t *Truth) RunsOf(c *Cause, handled bool) []string {
	var out []string
	for _, r := range t.Requests {
		if r.Cause != nil && (c == nil || r.Cause == c) && r.Cause.Handled == handled {
			out = append(out, r.TraceID)
		}
	}
	for _, j := range t.Jobs {
		if j.Cause != nil && (c == nil || j.Cause == c) && j.Cause.Handled == handled {
			out = append(out, j.TraceID)
		}
	}
	slices.Sort(out)
	return out
}

// CauseRuns is the trace ids of the runs with cause c.
func (t *Truth) CauseRuns(c *Cause) []string { return t.RunsOf(c, c.Handled) }

// SlowCount is how many times the slow statement ran: once per request of its route.
func (t *Truth) SlowCount() int {
	n := 0
	for _, r := range t.Requests {
		if r.Route == t.SlowRoute {
			n++
		}
	}
	return n
}

// Summary is the truth in a few lines, for failure messages.
func (t *Truth) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d requests (%d 5xx, %d 4xx, %d handled errors), %d job runs (%d failed), %d runs, %d failed runs, %d occurrences, slow statement %q ×%d\n",
		t.Service, len(t.Requests), t.FailedRequests(), t.ClientErrors(), t.Handled(), len(t.Jobs), t.FailedJobs(), t.Runs(), len(t.FailedRuns()), t.Occurrences(), t.SlowStatement, t.SlowCount())
	for _, c := range t.Causes {
		kind := "failed runs"
		if c.Handled {
			kind = "handled, runs ok"
		}
		fmt.Fprintf(&b, "  cause %-16s %2d× (%s) %q\n", c.Key, len(t.CauseRuns(c)), kind, c.Message)
	}
	return b.String()
}

// Check lists what would make this truth unfit to judge runlens by: a request that did not
// come back as designed, or the app's own log disagreeing with the workload.
func (t *Truth) Check(logs []logLine) []string {
	bad := slices.Clone(t.problems)
	byTrace := map[string][]logLine{}
	for _, l := range logs {
		if l.TraceID != "" {
			byTrace[l.TraceID] = append(byTrace[l.TraceID], l)
		}
	}
	seen := map[string]bool{}
	for _, r := range t.Requests {
		if r.TraceID == "" {
			bad = append(bad, fmt.Sprintf("%s answered %d without an x-trace-id", r.Route, r.Status))
			continue
		}
		if seen[r.TraceID] {
			bad = append(bad, fmt.Sprintf("trace %s answered twice", r.TraceID))
		}
		seen[r.TraceID] = true
		var errLogs, retries []string
		for _, l := range byTrace[r.TraceID] {
			switch {
			case l.Level >= 50 && l.Err != nil:
				errLogs = append(errLogs, l.Err.Message)
			case l.Level >= 50:
				errLogs = append(errLogs, l.Msg)
			case strings.Contains(l.Msg, "retrying"):
				retries = append(retries, l.Msg)
			}
		}
		switch {
		case r.Status >= 500:
			if r.Cause == nil || len(errLogs) != 1 || !strings.Contains(errLogs[0], r.Cause.Message) {
				bad = append(bad, fmt.Sprintf("%s answered %d (trace %s): want one error log saying the cause %v, the app logged %q", r.Route, r.Status, r.TraceID, r.Cause, errLogs))
			}
		case r.Cause != nil && r.Cause.Handled:
			if r.Status != 200 || len(retries) != 1 || len(errLogs) != 0 {
				bad = append(bad, fmt.Sprintf("%s (trace %s): want a 200 after one retry, got %d, retries %q, error logs %q", r.Route, r.TraceID, r.Status, retries, errLogs))
			}
		default:
			if r.Cause != nil || len(errLogs) != 0 || len(retries) != 0 {
				bad = append(bad, fmt.Sprintf("%s answered %d (trace %s) with cause %v, error logs %q, retries %q", r.Route, r.Status, r.TraceID, r.Cause, errLogs, retries))
			}
		}
	}
	for _, j := range t.Jobs {
		if j.TraceID == "" {
			bad = append(bad, fmt.Sprintf("job run %s: the app logged no trace id for it", j.ID))
		}
		if (j.Cause != nil) != (j.Status == "failed") {
			bad = append(bad, fmt.Sprintf("job run %s ended %q, want failed exactly when caused to", j.ID, j.Status))
		}
	}
	for _, c := range t.Causes {
		if len(t.CauseRuns(c)) == 0 {
			bad = append(bad, fmt.Sprintf("cause %s never happened", c.Key))
		}
	}
	return bad
}
