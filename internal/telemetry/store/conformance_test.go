package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// loadFixture stores the fixture dataset through the ingest API, with its conventions.
func loadFixture(t *testing.T, d *fixture.Dataset) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "telemetry.db"), Retention: 48 * time.Hour, Conventions: d.Conventions})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, rejected, err := s.IngestTraces(ctx, d.Traces); err != nil || rejected != 0 {
		t.Fatalf("ingest traces: rejected %d, %v", rejected, err)
	}
	if _, rejected, err := s.IngestLogs(ctx, d.Logs); err != nil || rejected != 0 {
		t.Fatalf("ingest logs: rejected %d, %v", rejected, err)
	}
	return s
}

func TestTheStoreWithItsCapabilitiesConforms(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		s := loadFixture(t, d)
		checkDerived(t, s)
		return engine.New(NewBackend(s), d.Conventions)
	}, telemetrytest.Options{})
}

func TestTheStoreScanningOnlyConforms(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		return engine.New(NewBackend(loadFixture(t, d)), d.Conventions).ScansOnly()
	}, telemetrytest.Options{})
}
