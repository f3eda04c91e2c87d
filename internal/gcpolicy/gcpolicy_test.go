package gcpolicy

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTheUsersGOGCAndGOMEMLIMITWin(t *testing.T) {
	for _, c := range []struct {
		name, gogc, limit string
		apply             func()
		wantPercent       int
		wantLimit         int64
	}{
		{"serve's own targets", "", "", Serve, Percent, ServeLimit},
		{"collect's own targets", "", "", Ingest, Percent, IngestLimit},
		{"the user's GOGC", "50", "", Ingest, 100, IngestLimit},
		{"the user's GOMEMLIMIT", "", "1GiB", Serve, Percent, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.limit)
			c.apply()
			// The runtime read GOGC and GOMEMLIMIT at start-up, not here: what this test sees
			// is what apply set, over the 100 and no-limit the deferred calls restored.
			if got := debug.SetGCPercent(100); got != c.wantPercent {
				t.Errorf("GC percent = %d, want %d", got, c.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit = %d, want %d", got, c.wantLimit)
			}
		})
	}
}
