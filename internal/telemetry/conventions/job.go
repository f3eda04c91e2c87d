package conventions

import (
	"strconv"
	"strings"
)

// Job is what the conventions read off a span that carries a job id.
type Job struct {
	// ID is the job id attribute.
	ID string
	// Name is the job-name attribute; empty when the span has none (callers fall back to the
	// span name).
	Name string
	// Status is the application's own job status; empty when absent (callers fall back to the
	// span status).
	Status string
	// OutcomeText is the outcome attribute, if any.
	OutcomeText string
	// ExitCode is set when an exit-code attribute holds an integer or an integer string.
	ExitCode *int64
}

// Job reads the job fields of a span; ok is false when the span carries no job id.
func (c *Conventions) Job(attrs Attributes) (job Job, ok bool) {
	id := attrs.first(c.JobKeys.IDKeys)
	if id == "" {
		return Job{}, false
	}
	job = Job{
		ID:          id,
		Name:        attrs.first(c.JobKeys.NameKeys),
		Status:      attrs.first(c.JobKeys.StatusKeys),
		OutcomeText: attrs.first(c.JobKeys.OutcomeKeys),
	}
	if code, ok := ParseExitCode(attrs.first(c.JobKeys.ExitCodeKeys)); ok {
		job.ExitCode = &code
	}
	return job, true
}

// Normalized run and job statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// IsErrorStatus reports whether an application status word means failure: it is one of the
// document's error statuses, compared case-insensitively with surrounding spaces ignored.
func (c *Conventions) IsErrorStatus(word string) bool {
	w := strings.TrimSpace(word)
	for _, e := range c.JobKeys.ErrorStatuses {
		if strings.EqualFold(w, e) {
			return true
		}
	}
	return false
}

// NormalizeStatus decides a run's or job's status, ok or error: the application's status word
// when it said one, else error when a span failed or the exit code is not 0, else ok.
func (c *Conventions) NormalizeStatus(word string, spanFailed bool, exitCode *int64) string {
	if strings.TrimSpace(word) != "" {
		if c.IsErrorStatus(word) {
			return StatusError
		}
		return StatusOK
	}
	if spanFailed || (exitCode != nil && *exitCode != 0) {
		return StatusError
	}
	return StatusOK
}

// Outcome is the application's own word for how a run ended: its status word, else its
// outcome attribute.
func (j Job) Outcome() string {
	if s := strings.TrimSpace(j.Status); s != "" {
		return s
	}
	return strings.TrimSpace(j.OutcomeText)
}

// ParseExitCode accepts an exit code sent as a number or as a numeric string ("3", " 3 ",
// "3.0"); anything else is not an exit code. Instrumentations disagree on the attribute type,
// and a job that failed with "1" must not look like one without an exit code.
func ParseExitCode(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// HTTPStatusKeys are the attributes an HTTP server span's response status code is read from:
// the stable name, then the legacy one that instrumentations still emit by default
// (docs/semantics.md R5).
var HTTPStatusKeys = []string{"http.response.status_code", "http.status_code"}
