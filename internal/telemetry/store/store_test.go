package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenCreatesParentDirectoryAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "telemetry.db")
	s := openTestStore(t, Options{Path: path})
	var version int
	if err := s.DB().QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion {
		t.Errorf("user_version = %d, want %d", version, SchemaVersion)
	}
	if len(s.InstanceID()) != 32 {
		t.Errorf("instance id %q is not 32 hex characters", s.InstanceID())
	}
	hw, err := s.HighWater(context.Background())
	if err != nil || hw != 0 {
		t.Errorf("HighWater = %d, %v; want 0 on a new store", hw, err)
	}
}

func TestReopenKeepsInstanceIDAndHighWater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "telemetry.db")
	s, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestTraces(ctx, makeTraces("a", 1, 10, time.Now())); err != nil {
		t.Fatal(err)
	}
	id := s.InstanceID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestStore(t, Options{Path: path})
	if s2.InstanceID() != id {
		t.Errorf("instance id changed across reopen: %q then %q", id, s2.InstanceID())
	}
	if hw, _ := s2.HighWater(ctx); hw != 10 {
		t.Errorf("HighWater after reopen = %d, want 10", hw)
	}
}

func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	t.Run("a missing file is not initialized", func(t *testing.T) {
		_, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "none.db"), ReadOnly: true})
		if !errors.Is(err, ErrNotInitialized) {
			t.Errorf("err = %v, want ErrNotInitialized", err)
		}
	})
	t.Run("a reader sees what the writer commits and cannot write", func(t *testing.T) {
		w := openTestStore(t, Options{})
		r := openTestStore(t, Options{Path: w.Path(), ReadOnly: true})
		if _, _, err := w.IngestTraces(ctx, makeTraces("a", 1, 3, time.Now())); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := r.DB().QueryRow("SELECT COUNT(*) FROM otel_traces").Scan(&n); err != nil || n != 3 {
			t.Errorf("reader counted %d spans (%v), want 3", n, err)
		}
		if _, _, err := r.IngestTraces(ctx, makeTraces("a", 2, 1, time.Now())); !errors.Is(err, ErrReadOnly) {
			t.Errorf("IngestTraces on a read-only store: %v, want ErrReadOnly", err)
		}
		if _, err := r.DB().Exec("DELETE FROM otel_traces"); err == nil {
			t.Error("a reader connection deleted rows; want query_only to refuse")
		}
		if r.InstanceID() != w.InstanceID() {
			t.Errorf("reader instance id %q, writer %q", r.InstanceID(), w.InstanceID())
		}
	})
}

func TestOpenRefusesASchemaFromANewerBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.db")
	s := openTestStoreNoCleanup(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, true, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, ro := range []bool{false, true} {
		if _, err := Open(context.Background(), Options{Path: path, ReadOnly: ro}); !errors.Is(err, ErrSchemaTooNew) {
			t.Errorf("Open(ReadOnly=%v) = %v, want ErrSchemaTooNew", ro, err)
		}
	}
}

func TestCloseIsIdempotentAndRefusesLaterWrites(t *testing.T) {
	s := openTestStoreNoCleanup(t, filepath.Join(t.TempDir(), "telemetry.db"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := s.IngestTraces(context.Background(), makeTraces("a", 1, 1, time.Now())); !errors.Is(err, ErrClosed) {
		t.Errorf("IngestTraces after Close: %v, want ErrClosed", err)
	}
}

func openTestStoreNoCleanup(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFsyncEveryCommitChoosesTheSynchronousLevel(t *testing.T) {
	cases := []struct {
		name  string
		fsync bool
		want  int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"by default a commit survives a killed process, fsynced at checkpoints", false, 1},
		{"on request every commit waits for the disk", true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTestStore(t, Options{FsyncEveryCommit: c.fsync})
			var got int
			if err := s.writerDB.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("synchronous = %d, want %d", got, c.want)
			}
		})
	}
}
