package docs

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestCorpusChangesArePickedUpWithoutRestart(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"keep.md": "# Keep\n\nstable text\n",
		"edit.md": "# Edit\n\nthe word alpha\n",
		"gone.md": "# Gone\n\nthe word gamma\n",
	})
	// Every call may refresh: no explicit Refresh anywhere in this test.
	c := openCorpus(t, Options{Root: root, RefreshInterval: time.Nanosecond})
	ctx := context.Background()
	before, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(root, "edit.md"), "# Edit\n\nthe word beta, longer now\n")
	writeFile(t, filepath.Join(root, "new", "added.md"), "# Added\n\nthe word delta\n")
	if err := os.Remove(filepath.Join(root, "gone.md")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, query string
		want        []string
	}{
		{"an edited file loses its old words", "alpha", nil},
		{"an edited file gains its new words", "beta", []string{"edit"}},
		{"an added file is found", "delta", []string{"new/added"}},
		{"a deleted file is gone", "gamma", nil},
		{"an untouched file stays", "stable", []string{"keep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hitSlugs(search(t, c, tt.query).Hits); !equalSlugs(got, tt.want) {
				t.Fatalf("search %q = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"edit", "keep", "new/added"}) {
		t.Errorf("listed %q", got)
	}
	after, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Fingerprint == before.Fingerprint {
		t.Errorf("fingerprint %s did not change with the corpus", after.Fingerprint)
	}
}

func TestFingerprintIsStableWhileNothingChanges(t *testing.T) {
	c := openCorpus(t, Options{Root: writeCorpus(t, map[string]string{"a.md": "# A\n", "b/c.md": "# C\n"})})
	ctx := context.Background()
	first, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Fingerprint != second.Fingerprint {
		t.Fatalf("fingerprint moved without a change: %s then %s", first.Fingerprint, second.Fingerprint)
	}
}

func TestRefreshIsRateLimited(t *testing.T) {
	root := writeCorpus(t, map[string]string{"a.md": "# A\n\nfirst\n"})
	c := openCorpus(t, Options{Root: root, RefreshInterval: time.Hour})
	if got := hitSlugs(search(t, c, "first").Hits); !equalSlugs(got, []string{"a"}) {
		t.Fatalf("initial search = %q", got)
	}
	writeFile(t, filepath.Join(root, "b.md"), "# B\n\nsecond\n")
	if got := search(t, c, "second"); got.Total != 0 {
		t.Fatalf("a read within the refresh interval walked the corpus again: %q", hitSlugs(got.Hits))
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := hitSlugs(search(t, c, "second").Hits); !equalSlugs(got, []string{"b"}) {
		t.Fatalf("explicit refresh missed the new file: %q", got)
	}
}

func TestSlugCollisionsResolveAsFilesComeAndGo(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"guides/index.md":  "# Guides index\n",
		"guides/README.md": "# Guides readme\n",
	})
	c := openCorpus(t, Options{Root: root, RefreshInterval: time.Nanosecond})
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"guides", "guides/README"}) {
		t.Fatalf("index.md should own the folder slug: %q", got)
	}
	writeFile(t, filepath.Join(root, "guides.md"), "# Guides page\n")
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"guides", "guides/README", "guides/index"}) {
		t.Fatalf("guides.md should take the folder slug: %q", got)
	}
	if d, err := c.Get(context.Background(), "guides", ""); err != nil || d.Title != "Guides page" {
		t.Fatalf("Get(guides) = %q, %v", d.Title, err)
	}
	if err := os.Remove(filepath.Join(root, "guides.md")); err != nil {
		t.Fatal(err)
	}
	if d, err := c.Get(context.Background(), "guides", ""); err != nil || d.Title != "Guides index" {
		t.Fatalf("after removal Get(guides) = %q, %v", d.Title, err)
	}
	if res := search(t, c, "index"); len(res.Hits) != 1 || res.Hits[0].Slug != "guides" {
		t.Fatalf("the renamed document is searchable under its old slug: %+v", res.Hits)
	}
}

func TestConcurrentReadsDuringRefreshes(t *testing.T) {
	root := writeCorpus(t, map[string]string{"a.md": "# A\n\nshared words\n", "b.md": "# B\n\nshared words\n"})
	c := openCorpus(t, Options{Root: root, RefreshInterval: time.Nanosecond})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if res, err := c.Search(ctx, "shared", 10, 0); err != nil || res.Total < 2 {
					t.Errorf("search during refresh: %d hits, %v", res.Total, err)
					return
				}
				if _, err := c.Get(ctx, "a", ""); err != nil {
					t.Errorf("get during refresh: %v", err)
					return
				}
			}
		})
	}
	for i := range 20 {
		// Write aside and rename, as editors do, so no refresh can see a half-written file.
		tmp := filepath.Join(root, ".b.md.tmp")
		writeFile(t, tmp, "# B\n\nshared words "+string(rune('a'+i))+"\n")
		if err := os.Rename(tmp, filepath.Join(root, "b.md")); err != nil {
			t.Fatal(err)
		}
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

func TestACancelledRefreshChangesNothing(t *testing.T) {
	root := writeCorpus(t, map[string]string{"a.md": "# A\n"})
	c := openCorpus(t, Options{Root: root, RefreshInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Refresh(ctx); err == nil {
		t.Fatal("a cancelled refresh reported success")
	}
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"a"}) {
		t.Fatalf("after a cancelled first build, the next call did not build: %q", got)
	}
}
