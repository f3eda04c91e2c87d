package telemetry

// Verdicts of get_app_status.
const (
	VerdictPass = "pass"
	VerdictWarn = "warn"
	VerdictFail = "fail"
)

// Verdict decides get_app_status's status: fail when a run failed or an error occurrence was
// not handled (docs/semantics.md R8: errors that never reached an ok run's entry span do not
// fail the app); warn when the window holds no span (no telemetry at all, or only telemetry
// older than the window), since silence is suspicious but not a failure; else pass.
func Verdict(s Status) string {
	failedRuns := false
	for _, d := range s.Domains {
		failedRuns = failedRuns || d.ErrorCount > 0
	}
	switch {
	case s.Errors > s.HandledErrors || failedRuns:
		return VerdictFail
	case s.Spans == 0:
		return VerdictWarn
	default:
		return VerdictPass
	}
}
