package conventions

import "strings"

// SeverityError is the lowest OTLP severity number that counts as an error (ERROR).
const SeverityError = 17

// IsErrorLog reports whether a log record is an error event: severity number ERROR or above,
// or a severity text of error or fatal in any case (some SDKs set only the text).
func IsErrorLog(severityNumber int32, severityText string) bool {
	if severityNumber >= SeverityError {
		return true
	}
	t := strings.TrimSpace(severityText)
	return strings.EqualFold(t, "error") || strings.EqualFold(t, "fatal")
}
