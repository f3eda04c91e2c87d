package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
)

// A page of error groups settles only the groups it shows: those groups are exactly the
// full answer's, and the others still carry their counts and sightings.
func TestAnErrorPageSettlesOnlyItsGroupsAndTheyAreTheFullAnswers(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	src := loadSources(t, conv, newRandomTelemetry(23, scaled(600), now, 3*time.Hour))
	type sighting struct {
		service, domain, fp string
		count, first, last  int64
	}
	sightings := func(groups []telemetry.ErrorGroup) []sighting {
		out := make([]sighting, 0, len(groups))
		for _, g := range groups {
			out = append(out, sighting{g.Service, g.Domain, g.Fingerprint, g.Count, g.FirstSeenMs, g.LastSeenMs})
		}
		slices.SortFunc(out, func(a, b sighting) int {
			return strings.Compare(a.service+"\x00"+a.domain+"\x00"+a.fp, b.service+"\x00"+b.domain+"\x00"+b.fp)
		})
		return out
	}
	compared := 0
	for wi, w := range windowsAround(now, 3*time.Hour) {
		full, err := src.caps.Errors(ctx, telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 5, 20} {
			name := fmt.Sprintf("window %d, %d groups", wi, n)
			part, err := src.caps.Errors(ctx, telemetry.ErrorsQuery{Window: w, Settle: n})
			if err != nil {
				t.Fatal(err)
			}
			if part.Events != full.Events || len(part.Groups) != len(full.Groups) {
				t.Fatalf("%s: %d events in %d groups, want %d in %d", name, part.Events, len(part.Groups), full.Events, len(full.Groups))
			}
			k := min(n, len(full.Groups))
			if !reflect.DeepEqual(part.Groups[:k], full.Groups[:k]) {
				t.Errorf("%s: the page's groups differ:\n got %+v\nwant %+v", name, part.Groups[:k], full.Groups[:k])
			}
			if !reflect.DeepEqual(sightings(part.Groups), sightings(full.Groups)) {
				t.Errorf("%s: the groups' counts and sightings differ", name)
			}
			if len(full.Groups) > n {
				compared++
			}
		}
	}
	if compared == 0 {
		t.Fatal("no window had more groups than a page: the test compares nothing left unsettled")
	}
}

// Every page of get_recent_errors through the flows shows its groups in full: the flows ask the
// store to settle up to the page's end, offset included, and each page equals the engine's
// page over its own scans (which settles every group).
func TestEveryPageOfRecentErrorsShowsItsGroupsInFull(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	src := loadSources(t, conv, newRandomTelemetry(23, scaled(600), now, 3*time.Hour))
	clock := func() time.Time { return now }
	pages := func(q telemetry.Source) []gen.GetRecentErrorsOutput {
		f := flows.New(flows.Deps{Telemetry: q, Now: clock})
		var out []gen.GetRecentErrorsOutput
		var cursor *string
		for {
			page, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Window: "6h", Limit: 3, Cursor: cursor}))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page)
			if cursor = page.Page.NextCursor; cursor == nil || len(out) > 100 {
				return out
			}
		}
	}
	got, want := pages(src.caps), pages(src.scans)
	if len(want) < 3 {
		t.Fatalf("%d pages: the test needs groups past the second page", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d pages, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Groups, want[i].Groups) {
			t.Errorf("page %d:\n got %+v\nwant %+v", i+1, got[i].Groups, want[i].Groups)
		}
	}
}
