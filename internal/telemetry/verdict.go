package telemetry

// Verdicts of get_app_status.
const (
	VerdictPass = "pass"
	VerdictWarn = "warn"
	VerdictFail = "fail"
)

// Verdict decides get_app_status's status: fail when the window holds any error event; warn
// when it holds no span (no telemetry at all, or only telemetry older than the window), since
// silence is suspicious but not a failure; else pass.
func Verdict(s Status) string {
	switch {
	case s.Errors > 0:
		return VerdictFail
	case s.Spans == 0:
		return VerdictWarn
	default:
		return VerdictPass
	}
}
