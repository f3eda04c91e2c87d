package dbservers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindPGBin(t *testing.T) {
	withPrograms := func(t *testing.T, mode os.FileMode, names ...string) string {
		dir := t.TempDir()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), mode); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		wantErr string
	}{
		{"a RUNLENS_PG_BIN holding initdb, postgres and pg_ctl is used", func(t *testing.T) string {
			return withPrograms(t, 0o755, "initdb", "postgres", "pg_ctl")
		}, ""},
		{"a RUNLENS_PG_BIN without initdb is refused, naming it", func(t *testing.T) string {
			return withPrograms(t, 0o755, "postgres", "pg_ctl")
		}, "missing initdb"},
		{"a RUNLENS_PG_BIN whose programs cannot be run is refused", func(t *testing.T) string {
			return withPrograms(t, 0o644, "initdb", "postgres", "pg_ctl")
		}, "not executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			got, err := FindPGBin(func(k string) string {
				if k == EnvPGBin {
					return dir
				}
				return ""
			})
			switch {
			case tt.wantErr == "" && (err != nil || got != dir):
				t.Fatalf("FindPGBin = %q, %v; want %q", got, err, dir)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("FindPGBin = %q, %v; want an error saying %q", got, err, tt.wantErr)
			}
		})
	}
}
