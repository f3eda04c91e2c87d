package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// The source family of an Aspire dashboard: answering with recent data passes; a dashboard
// that is down, or that refuses the key, fails with the fix that makes it answer.
func TestTheSourceFamilyOfAnAspireDashboard(t *testing.T) {
	now := time.Now()
	d, err := fixture.New(fixture.Options{Now: now, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := aspiretest.New(aspiretest.Options{APIKey: "doctor-key"})
	defer srv.Close()
	srv.Load(d.Traces, d.Logs)
	down := aspiretest.New(aspiretest.Options{})
	downURL := down.URL
	down.Close()
	cases := []struct {
		name       string
		endpoint   string
		key        string
		want       Status
		summary    string
		fix        string
		notInCheck string
	}{
		{"a dashboard with recent data passes", srv.URL, "doctor-key", Pass, "answers", "", "doctor-key"},
		{"a dashboard that is down fails with how to start it", downURL, "doctor-key", Fail, "does not answer", "Start the Aspire AppHost", "doctor-key"},
		{"a dashboard without the key fails with the variable to set", srv.URL, "", Fail, "ASPIRE_API_KEY is not set", "Set ASPIRE_API_KEY", ""},
		{"a dashboard refusing the key fails without showing it", srv.URL, "stale-key", Fail, "refused the API key", "Set ASPIRE_API_KEY", "stale-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := engine.New(aspire.New(aspire.Options{Endpoint: c.endpoint, APIKey: c.key, Timeout: 2 * time.Second}), d.Conventions)
			rep := Run(context.Background(), Families(Deps{Telemetry: src, Now: func() time.Time { return now }}, ""), FamilySource)
			fr := rep.Families[0]
			if fr.Status != c.want || len(fr.Checks) == 0 {
				t.Fatalf("source family %s %+v, want %s", fr.Status, fr.Checks, c.want)
			}
			first := fr.Checks[0]
			if !strings.Contains(first.Summary, c.summary) || !strings.Contains(first.Fix, c.fix) {
				t.Errorf("check %+v, want summary with %q and fix with %q", first, c.summary, c.fix)
			}
			for _, ch := range fr.Checks {
				if c.notInCheck != "" && strings.Contains(ch.Summary+ch.Fix, c.notInCheck) {
					t.Errorf("check %s shows the key", ch.Name)
				}
			}
		})
	}
}
