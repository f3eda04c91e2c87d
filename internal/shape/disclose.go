package shape

import "fmt"

// Disclose is the one path an answer takes out of the server: it redacts raw, then fits it into
// the bound of detail d. Redacting first matters twice over: a secret cut in half by Fit could
// slip past the patterns that recognise it whole, and "[REDACTED]" is longer than some of the
// secrets it replaces, so redacting after fitting could break the budget. A full answer far
// past its ceiling (twice over) fails at once with a *TooLargeError: no redaction could bring
// it back, so the work is spared.
func Disclose(raw []byte, d Detail, lim Limits, paging *Paging, r *Redactor) ([]byte, bool, error) {
	ceiling := lim.FullCeiling
	if ceiling == 0 {
		ceiling = DefaultFullCeiling
	}
	if d == Full && len(raw) > 2*ceiling {
		return nil, false, &TooLargeError{Detail: d, Size: len(raw), Limit: ceiling}
	}
	red, err := r.JSON(raw)
	if err != nil {
		return nil, false, fmt.Errorf("disclose answer: redact: %w", err)
	}
	return Fit(red, d, lim, paging)
}
