package shape

import (
	"fmt"
	"strings"
)

// Detail is how much of an answer the caller asked for. Every tool that returns a collection
// takes it, so the same three words mean the same disclosure everywhere.
type Detail string

const (
	// Summary carries counts and decisions only, no collections, in at most SummaryBudget bytes.
	Summary Detail = "summary"
	// Standard is the default: bounded collections, privacy-minimal fields, a byte budget.
	Standard Detail = "standard"
	// Full is deliberate: raw values may appear, there is no compact budget, only a safety
	// ceiling (DefaultFullCeiling unless configured). Redaction still applies.
	Full Detail = "full"
)

// Byte budgets of the serialized structuredContent, as the tool contracts fix them. They are
// ceilings enforced on every answer, not averages.
const (
	// SummaryBudget bounds every detail=summary answer.
	SummaryBudget = 4 << 10
	// StandardBudget bounds a detail=standard answer of most tools.
	StandardBudget = 16 << 10
	// LargeStandardBudget bounds a detail=standard answer of the tools whose point is one large
	// payload (get_run, get_doc, execute_command).
	LargeStandardBudget = 32 << 10
	// DefaultFullCeiling is the hard safety ceiling of a detail=full answer: above it the call
	// fails with advice instead of sending an unbounded message.
	DefaultFullCeiling = 8 << 20
)

// ParseDetail reads a detail argument; the empty string means the default, Standard. Schemas
// already restrict the values, so an unknown one is a caller bug reported as an error, not a
// silent fallback.
func ParseDetail(s string) (Detail, error) {
	switch d := Detail(strings.TrimSpace(s)); d {
	case "":
		return Standard, nil
	case Summary, Standard, Full:
		return d, nil
	default:
		return "", fmt.Errorf("parse detail %q: want summary, standard or full", s)
	}
}

// String returns the wire form of d.
func (d Detail) String() string { return string(d) }

// DefaultLimits returns the contract's limits for detail d; large selects the 32 KiB standard
// budget of the tools whose answer is one large payload. Configuration may override the result.
func DefaultLimits(d Detail, large bool) Limits {
	lim := Limits{Budget: StandardBudget, FullCeiling: DefaultFullCeiling}
	switch {
	case d == Summary:
		lim.Budget = SummaryBudget
	case large:
		lim.Budget = LargeStandardBudget
	}
	return lim
}
