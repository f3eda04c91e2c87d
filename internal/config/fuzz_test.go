package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzCheck loads arbitrary bytes as runlens.json. Whatever they are, loading never panics,
// answers within a second, reports at most maxErrors problems, each located inside the file,
// and quotes no value at length.
func FuzzCheck(f *testing.F) {
	seeds := []string{
		`{}`,
		`{"docs": {"root": "docs", "exclude": ["drafts/**"]}}`,
		`{"commands": {"catalog": [{"path": "test", "argv": ["go", "test", "./..."]}], "policy": {"allow": [{"name": "t", "prefix": ["test"]}]}}}`,
		`{"telemetry": {"source": "sqlite:.runlens/telemetry.db"}, "receiver": {"address": "127.0.0.1:4318"}}`,
		`{"docs": {"root": "docs"}, "docs": {}}`,
		`{"unknwon": 1, "docs": {"roto": "x"}}`,
		`{"store": {"retention": "25h", "maxBytes": -1}}`,
		"\xef\xbb\xbf{\"docs\": {\"root\": \"d\xc3\xa9\"}}",
		`{"a":` + strings.Repeat(`{"a":`, 70) + "1",
		strings.Repeat("[", 100),
		`[1, 2`,
		`"\"[[["`,
		"{\n  \"docs\": {\n    \"root\": 5\n  }\n}\n",
	}
	if examples, err := filepath.Glob(filepath.Join("..", "..", "schemas", "examples", "*.json")); err == nil {
		for _, name := range examples {
			if data, err := os.ReadFile(name); err == nil {
				seeds = append(seeds, string(data))
			}
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	l := testLoader(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		err := l.Check("/p/runlens.json", data)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("checking %d bytes took %v", len(data), took)
		}
		if err == nil {
			return
		}
		errs, ok := err.(Errors)
		if !ok {
			t.Fatalf("Check returned %T, want Errors", err)
		}
		lines := strings.Count(string(data), "\n") + 1
		if len(errs) == 0 || len(errs) > maxErrors {
			t.Fatalf("%d problems", len(errs))
		}
		for _, e := range errs {
			if e.Line < 0 || e.Line > lines || e.Column < 0 || e.Column > utf8.RuneCount(data)+1 {
				t.Fatalf("problem %v at %d:%d outside the file of %d lines", e, e.Line, e.Column, lines)
			}
			if len(e.Problem) > 4096 {
				t.Fatalf("problem of %d bytes", len(e.Problem))
			}
		}
	})
}
