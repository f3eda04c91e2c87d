package captured

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
)

// Window is the window the checks ask about: the day before the workload's end, and a minute
// after it.
func (c *Capture) Window() telemetry.Window {
	end := c.End()
	return telemetry.Window{StartMs: end.Add(-24 * time.Hour).UnixMilli(), EndMs: end.Add(time.Minute).UnixMilli()}
}

// Check asks src what the capture's truth knows the answer of and returns every disagreement:
// the runs and which of them failed (R5), the occurrences, handled ones and causes (R7, R8),
// that the error status counts equal the groups' sum, the cause that failed each failed run
// (R7), and the slow statement on top of the database answer (R13).
func Check(ctx context.Context, src telemetry.Source, c *Capture) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	w := c.Window()

	var failed []string
	all := 0
	for offset := 0; ; offset += 500 {
		page, err := src.Runs(ctx, telemetry.RunsQuery{Window: w, Offset: offset, Limit: 500})
		if err != nil {
			return append(bad, "list runs: "+err.Error())
		}
		for _, r := range page.Runs {
			if !slices.Contains(c.Truth.Domains, r.Domain) {
				if r.Status != telemetry.StatusOK {
					fail("run %s %q of domain %s, which the workload did not make, is %s", r.ID, r.Name, r.Domain, r.Status)
				}
				continue
			}
			all++
			if r.Status == telemetry.StatusError {
				failed = append(failed, r.TraceID)
			}
		}
		if len(page.Runs) < 500 {
			break
		}
	}
	slices.Sort(failed)
	if all != c.Truth.Runs {
		fail("runs in %v: %d, truth %d", c.Truth.Domains, all, c.Truth.Runs)
	}
	if !slices.Equal(failed, c.Truth.FailedRuns) {
		fail("failed runs: %d (%s), truth %d (%s)", len(failed), head(failed), len(c.Truth.FailedRuns), head(c.Truth.FailedRuns))
	}

	rep, err := src.Errors(ctx, telemetry.ErrorsQuery{Window: w})
	if err != nil {
		return append(bad, "errors: "+err.Error())
	}
	handled, sum := int64(0), int64(0)
	for _, g := range rep.Groups {
		handled += g.Handled
		sum += g.Count
	}
	if rep.Events != int64(c.Truth.Occurrences) || sum != rep.Events {
		fail("occurrences: %d (groups' sum %d), truth %d", rep.Events, sum, c.Truth.Occurrences)
	}
	if handled != int64(c.Truth.Handled) {
		fail("handled occurrences: %d, truth %d", handled, c.Truth.Handled)
	}
	if len(rep.Groups) != c.Truth.Causes {
		var groups []string
		for _, g := range rep.Groups {
			groups = append(groups, fmt.Sprintf("%s×%d %q", g.Service, g.Count, g.SampleMessage))
		}
		fail("error groups: %d, truth %d causes: %s", len(rep.Groups), c.Truth.Causes, strings.Join(groups, "; "))
	}

	st, err := src.Status(ctx, telemetry.StatusQuery{Window: w})
	if err != nil {
		return append(bad, "status: "+err.Error())
	}
	if st.Errors != rep.Events || st.HandledErrors != handled {
		fail("status errors %d (handled %d), the groups say %d (handled %d)", st.Errors, st.HandledErrors, rep.Events, handled)
	}

	// A failed run leads with a cause of its own: the message get_run gives is one of the groups'.
	messages := map[string]bool{}
	for _, g := range rep.Groups {
		messages[g.SampleMessage] = true
	}
	for _, id := range c.Truth.FailedRuns[:min(3, len(c.Truth.FailedRuns))] {
		run, err := src.Run(ctx, telemetry.RunQuery{ID: id})
		if err != nil {
			fail("get run %s: %v", id, err)
			continue
		}
		if run.Status != telemetry.StatusError || run.ErrorMessage == "" || !messages[run.ErrorMessage] {
			fail("run %s: status %s, message %q; want error with one of the groups' messages", id, run.Status, run.ErrorMessage)
		}
	}

	for _, svc := range slices.Sorted(maps.Keys(c.Truth.SlowStatements)) {
		want := c.Truth.SlowStatements[svc]
		db, err := src.DBOperations(ctx, telemetry.DBQuery{Window: w, Service: svc})
		if err != nil {
			return append(bad, "database operations: "+err.Error())
		}
		if len(db.Operations) == 0 || !strings.Contains(strings.ToUpper(db.Operations[0].Statement), strings.ToUpper(want)) {
			top := "none"
			if len(db.Operations) > 0 {
				top = db.Operations[0].Statement
			}
			fail("top database operation of service %q: %q; truth: the slow statement has %q", svc, top, want)
		}
	}
	return bad
}

func head(ids []string) string {
	if len(ids) > 3 {
		return strings.Join(ids[:3], ", ") + ", …"
	}
	return strings.Join(ids, ", ")
}
