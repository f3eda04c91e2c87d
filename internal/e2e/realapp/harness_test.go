package realapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestNearestRank(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"the median of four values is the second smallest", ms(40, 10, 30, 20), 0.5, 20 * time.Millisecond},
		{"p95 of twenty values is the nineteenth", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 0.95, 19 * time.Millisecond},
		{"p99 of three values is the largest", ms(3, 1, 2), 0.99, 3 * time.Millisecond},
		{"no values give zero", nil, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nearestRank(tt.in, tt.p); got != tt.want {
				t.Fatalf("nearestRank(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
			}
		})
	}
}
