//go:build unix

package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// withUmask runs f with the process umask set to mask; the store tests run one at a time, so
// nothing else creates files meanwhile.
func withUmask(t *testing.T, mask int, f func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", filepath.Base(path), err)
	}
	return info.Mode().Perm()
}

func TestAStoreInASharedFolderIsPrivateWhateverTheUmask(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o002} {
		t.Run(fmt.Sprintf("umask %03o", mask), func(t *testing.T) {
			shared := t.TempDir()
			if err := os.Chmod(shared, 0o777); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(shared, "team", "runlens", "telemetry.db")
			withUmask(t, mask, func() {
				s := openTestStore(t, Options{Path: path})
				ctx := context.Background()
				if _, _, err := s.IngestTraces(ctx, makeTraces("checkout", 1, 20, time.Now())); err != nil {
					t.Fatal(err)
				}
				if _, _, err := s.IngestLogs(ctx, makeLogs("checkout", 5, time.Now())); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{path, path + "-wal", path + "-shm"} {
					if m := mode(t, f); m != 0o600 {
						t.Errorf("%s has mode %v, want -rw------- while it holds telemetry", filepath.Base(f), m)
					}
				}
				for _, d := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
					if m := mode(t, d); m != 0o700 {
						t.Errorf("folder %s that runlens created has mode %v, want drwx------", filepath.Base(d), m)
					}
				}
				if m := mode(t, shared); m != 0o777 {
					t.Errorf("the shared folder the store was put in changed mode to %v", m)
				}
			})
		})
	}
}

func TestOpeningAWorldReadableStoreMakesItPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.db")
	s := openTestStoreNoCleanup(t, path)
	if _, _, err := s.IngestTraces(context.Background(), makeTraces("checkout", 1, 5, time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// As an earlier release left it: readable by everyone, with a stale WAL beside it.
	if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = openTestStore(t, Options{Path: path})
	if _, _, err := s.IngestTraces(context.Background(), makeTraces("checkout", 2, 5, time.Now())); err != nil {
		t.Fatal(err)
	}
	if hw, err := s.HighWater(context.Background()); err != nil || hw != 10 {
		t.Errorf("HighWater = %d, %v; want the 5 earlier spans kept and 5 new ones", hw, err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s has mode %v after reopening, want -rw-------", filepath.Base(f), m)
		}
	}
}
