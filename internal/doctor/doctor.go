// Package doctor answers "is everything wired so the other tools can answer?". It runs check
// families in a fixed order, each isolated: a family that fails or panics becomes one failing
// check and the others still run. Every family is bounded (MaxChecks; the overflow folds into
// one check whose status is the worst it hides), and every check that does not pass says how to
// fix it.
package doctor

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Status is a check's verdict, ordered pass < warn < fail.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
)

// rank orders statuses so the worst wins.
func (s Status) rank() int {
	switch s {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// Worst returns the worse of a and b.
func Worst(a, b Status) Status {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// MaxChecks bounds the checks one family reports.
const MaxChecks = 20

// Bounds of a check's text, from the check schema (schemas/defs/check.json), in characters.
// Summaries and fixes quote what the user configured (a docs root, a file name, an endpoint),
// which may be longer than a whole check may be; they are shortened here, once for every family.
const (
	MaxNameRunes    = 128
	MaxSummaryRunes = 1024
	MaxFixRunes     = 1024
)

// Check is one finding.
type Check struct {
	Name    string
	Status  Status
	Summary string
	// Fix is what a person should do; every check that does not pass has one.
	Fix string
}

// Family is a named group of checks.
type Family struct {
	Name string
	Run  func(ctx context.Context) ([]Check, error)
}

// FamilyReport is one family's outcome.
type FamilyReport struct {
	Name   string
	Status Status
	Checks []Check
	Counts Counts
}

// Counts tallies checks by verdict.
type Counts struct{ Pass, Warn, Fail int }

func (c *Counts) add(s Status) {
	switch s {
	case Pass:
		c.Pass++
	case Warn:
		c.Warn++
	default:
		c.Fail++
	}
}

// Report is the doctor's whole answer.
type Report struct {
	Status   Status
	Counts   Counts
	Families []FamilyReport
}

// Run runs the families in order (only the one named only, when it is not empty).
func Run(ctx context.Context, families []Family, only string) Report {
	rep := Report{Status: Pass}
	for _, f := range families {
		if only != "" && f.Name != only {
			continue
		}
		fr := runFamily(ctx, f)
		rep.Families = append(rep.Families, fr)
		rep.Status = Worst(rep.Status, fr.Status)
		rep.Counts.Pass += fr.Counts.Pass
		rep.Counts.Warn += fr.Counts.Warn
		rep.Counts.Fail += fr.Counts.Fail
	}
	return rep
}

// runFamily runs one family, turning an error or a panic into a failing check.
func runFamily(ctx context.Context, f Family) (fr FamilyReport) {
	fr = FamilyReport{Name: f.Name, Status: Pass}
	checks, err := safeRun(ctx, f)
	if err != nil {
		checks = []Check{{
			Name:    f.Name + "_family",
			Status:  Fail,
			Summary: "The " + f.Name + " checks could not run: " + err.Error(),
			Fix:     "Run `runlens doctor --json` with RUNLENS_LOG_LEVEL=debug and read the log.",
		}}
	}
	checks = fold(f.Name, checks)
	for i := range checks {
		c := &checks[i]
		if c.Status != Pass && c.Fix == "" {
			c.Fix = "See the summary."
		}
		c.Name = Shorten(c.Name, MaxNameRunes)
		c.Summary = Shorten(c.Summary, MaxSummaryRunes)
		c.Fix = Shorten(c.Fix, MaxFixRunes)
		fr.Status = Worst(fr.Status, c.Status)
		fr.Counts.add(c.Status)
	}
	fr.Checks = checks
	return fr
}

// safeRun calls f.Run and recovers a panic into an error, so one broken family cannot take
// the doctor down.
func safeRun(ctx context.Context, f Family) (checks []Check, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			checks = nil
		}
	}()
	return f.Run(ctx)
}

// fold keeps at most MaxChecks checks: the rest become one `<family>_additional_checks` check
// whose status is the worst of those it replaces.
func fold(family string, checks []Check) []Check {
	if len(checks) <= MaxChecks {
		return checks
	}
	kept := append([]Check(nil), checks[:MaxChecks-1]...)
	rest := checks[MaxChecks-1:]
	worst := Pass
	var names []string
	for _, c := range rest {
		worst = Worst(worst, c.Status)
		if len(names) < 5 {
			names = append(names, c.Name)
		}
	}
	more := ""
	if len(rest) > len(names) {
		more = fmt.Sprintf(" and %d more", len(rest)-len(names))
	}
	folded := Check{
		Name:    family + "_additional_checks",
		Status:  worst,
		Summary: fmt.Sprintf("%d more checks (%s%s), worst status %s.", len(rest), strings.Join(names, ", "), more, worst),
	}
	if worst != Pass {
		folded.Fix = "Run the doctor with family=" + family + " and fix the checks above first."
	}
	return append(kept, folded)
}

// Summary returns one check summarising a family, for the top-level checks list: the worst
// check's summary and fix, or a pass line.
func Summary(fr FamilyReport) Check {
	for _, want := range []Status{Fail, Warn} {
		for _, c := range fr.Checks {
			if c.Status == want {
				return Check{Name: fr.Name, Status: want, Summary: c.Summary, Fix: c.Fix}
			}
		}
	}
	return Check{Name: fr.Name, Status: Pass, Summary: fmt.Sprintf("%d check(s) passed.", fr.Counts.Pass)}
}

// Shorten keeps at most n characters of s, ending a shortened text with "…". It cuts between
// characters, never inside one, and makes invalid UTF-8 valid, so the result always fits a
// schema's maxLength of n.
func Shorten(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	kept := 0
	for i := range s {
		if kept == n-1 {
			return s[:i] + "…"
		}
		kept++
	}
	return s
}
