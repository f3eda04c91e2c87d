package docs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// fixtureExcludes are the globs the fixture corpus is meant to be read with.
var fixtureExcludes = []string{"archive/**", "*.tmp.md"}

// openFixture opens the checked-in corpus under testdata/corpus.
func openFixture(t *testing.T) *Corpus {
	t.Helper()
	return openCorpus(t, Options{Root: filepath.Join("testdata", "corpus"), Exclude: fixtureExcludes})
}

func openCorpus(t *testing.T, o Options) *Corpus {
	t.Helper()
	c, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// writeCorpus creates files (slash paths to contents) under a fresh folder and returns it.
func writeCorpus(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

// writeFile writes content and moves the modification time forward, so a change is visible to
// the index even on a file system with coarse timestamps.
func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	var next time.Time
	if info, err := os.Stat(name); err == nil {
		next = info.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if !next.IsZero() {
		if err := os.Chtimes(name, next, next); err != nil {
			t.Fatal(err)
		}
	}
}

func search(t *testing.T, c *Corpus, query string) SearchResult {
	t.Helper()
	res, err := c.Search(context.Background(), query, 20, 0)
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	return res
}

func hitSlugs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Slug)
	}
	return out
}

func listSlugs(t *testing.T, c *Corpus, prefix string) []string {
	t.Helper()
	res, err := c.List(context.Background(), prefix, maxPage, 0)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	var out []string
	for _, d := range res.Docs {
		out = append(out, d.Slug)
	}
	return out
}

func equalSlugs(got, want []string) bool {
	return slices.Equal(got, want) || len(got) == 0 && len(want) == 0
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}
