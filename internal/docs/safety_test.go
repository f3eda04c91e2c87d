package docs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGetRejectsSlugsThatLeaveTheRoot(t *testing.T) {
	c := openFixture(t)
	slugs := []string{
		"../x",
		"/etc/passwd",
		"a/../../b",
		"guides/../../corpus/index",
		"..",
		".",
		"%2e%2e/x",
		"%2E%2E%2Fsecret",
		"guides%2fsetup",
		"guides%5csetup",
		"guides%252fsetup",
		`a\b`,
		`guides\setup`,
		`C:\Windows\win.ini`,
		"guides\x00setup",
		"guides/setup\x00.md",
		"guides//setup",
		"guides/./setup",
		"guides/setup/",
		"",
		"\xff\xfe",
		strings.Repeat("a/", maxSlugBytes),
		"_drafts/unpublished",
		".hidden/notes",
		"_partial",
		"archive/old",
		"guides/scratch.tmp",
		"notes.txt",
	}
	for _, slug := range slugs {
		t.Run(strings.ToValidUTF8(slug[:min(len(slug), 40)], "?"), func(t *testing.T) {
			d, err := c.Get(context.Background(), slug, "")
			if !errors.Is(err, ErrDocNotFound) {
				t.Fatalf("Get(%q) = %q, %v; want ErrDocNotFound", slug, d.Content, err)
			}
		})
	}
}

// symlinkCorpus builds a docs root next to a secret file, with symbolic links that point at the
// secret from inside the root. It returns the project folder and the docs root.
func symlinkCorpus(t *testing.T) (string, string) {
	t.Helper()
	project := t.TempDir()
	docs := filepath.Join(project, "docs")
	outside := filepath.Join(project, "outside")
	writeFile(t, filepath.Join(outside, "secret.md"), "# Secret\n\ntopsecret material\n")
	writeFile(t, filepath.Join(docs, "ok.md"), "# Fine\n\nOrdinary text.\n")
	links := map[string]string{
		"link.md":        filepath.Join("..", "outside", "secret.md"),
		"absolute.md":    filepath.Join(outside, "secret.md"),
		"linkdir":        filepath.Join("..", "outside"),
		"inside-link.md": "ok.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(docs, name)); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	return project, docs
}

func TestSymlinksAreNeverRead(t *testing.T) {
	_, docs := symlinkCorpus(t)
	c := openCorpus(t, Options{Root: docs})
	ctx := context.Background()

	if res := search(t, c, "topsecret"); res.Total != 0 {
		t.Fatalf("search found the linked secret: %+v", res.Hits)
	}
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"ok"}) {
		t.Fatalf("listed %q, want only ok", got)
	}
	for _, slug := range []string{"link", "absolute", "linkdir/secret", "inside-link"} {
		if _, err := c.Get(ctx, slug, ""); !errors.Is(err, ErrDocNotFound) {
			t.Errorf("Get(%q): %v, want ErrDocNotFound", slug, err)
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Skipped.Symlinks != 4 {
		t.Errorf("skipped symlinks = %d, want 4", info.Skipped.Symlinks)
	}
}

func TestAFileSwappedForASymlinkAfterIndexingIsNotRead(t *testing.T) {
	project, docs := symlinkCorpus(t)
	c := openCorpus(t, Options{Root: docs, RefreshInterval: time.Hour})
	ctx := context.Background()
	if _, err := c.Get(ctx, "ok", ""); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(docs, "ok.md")
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(project, "outside", "secret.md"), ok); err != nil {
		t.Fatal(err)
	}
	d, err := c.Get(ctx, "ok", "")
	if !errors.Is(err, ErrDocNotFound) || strings.Contains(d.Content, "topsecret") {
		t.Fatalf("Get after the swap = %q, %v; want ErrDocNotFound", d.Content, err)
	}
}

func TestASymlinkedDocsRootIsFollowed(t *testing.T) {
	project, docs := symlinkCorpus(t)
	link := filepath.Join(project, "docs-link")
	if err := os.Symlink(docs, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	c := openCorpus(t, Options{ProjectRoot: project, Root: "docs-link"})
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"ok"}) {
		t.Fatalf("listed %q through the linked root, want ok", got)
	}
}

func TestLimitsSkipAndCount(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"a.md":   "# A\n\nsmall\n",
		"b.md":   "# B\n\nsmall\n",
		"big.md": "# Big\n\n" + strings.Repeat("large ", 100),
		"c.md":   "# C\n\nsmall\n",
	})
	c := openCorpus(t, Options{Root: root, MaxFileBytes: 200, MaxDocs: 2})
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.DocumentCount != 2 || info.Skipped.Oversize != 1 || info.Skipped.OverLimit != 1 || info.Skipped.Total() != 2 {
		t.Fatalf("info = %+v", info)
	}
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"a", "b"}) {
		t.Fatalf("kept %q, want the first two by name", got)
	}
}

func TestMissingCorpus(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "file-not-folder"), "x")
	tests := []struct{ name, root string }{
		{"a root that does not exist", "docs"},
		{"a root that is a file", "file-not-folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openCorpus(t, Options{ProjectRoot: project, Root: tt.root})
			_, err := c.Search(context.Background(), "anything", 10, 0)
			var cnf *CorpusNotFoundError
			if !errors.As(err, &cnf) || !errors.Is(err, ErrCorpusNotFound) {
				t.Fatalf("error = %v, want CorpusNotFoundError", err)
			}
			if cnf.Root != tt.root {
				t.Errorf("root = %q, want %q relative to the project", cnf.Root, tt.root)
			}
			_, err = c.Get(context.Background(), "index", "")
			wantErr(t, err, ErrCorpusNotFound)
			_, err = c.List(context.Background(), "", 10, 0)
			wantErr(t, err, ErrCorpusNotFound)
		})
	}
}

func TestACorpusThatAppearsLaterIsPickedUp(t *testing.T) {
	project := t.TempDir()
	c := openCorpus(t, Options{ProjectRoot: project, RefreshInterval: time.Nanosecond})
	_, err := c.List(context.Background(), "", 10, 0)
	wantErr(t, err, ErrCorpusNotFound)
	writeFile(t, filepath.Join(project, "docs", "index.md"), "# Hello\n")
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"index"}) {
		t.Fatalf("listed %q after the root appeared", got)
	}
}

// A docs root must be a folder of the project: not above it, not the file system's root, and
// not a folder inside it that links out, even when the link is made after the corpus opened.
func TestARootOutsideTheProjectIsRefused(t *testing.T) {
	elsewhere := writeCorpus(t, map[string]string{"a.md": "# A\n\nsecret\n"})
	project := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(project, "docs")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	tests := []struct{ name, root string }{
		{"a folder elsewhere", elsewhere},
		{"a parent folder", ".."},
		{"the file system root", "/"},
		{"the default docs folder linking out", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openCorpus(t, Options{ProjectRoot: project, Root: tt.root})
			info, err := c.Info(context.Background())
			var out *RootOutsideError
			if !errors.As(err, &out) || !errors.Is(err, ErrRootOutside) || info.DocumentCount != 0 {
				t.Fatalf("Info = %+v, %v; want RootOutsideError", info, err)
			}
			if filepath.IsAbs(out.Root) || strings.Contains(out.Root, "..") {
				t.Errorf("root = %q, shown absolute or climbing", out.Root)
			}
			_, err = c.Get(context.Background(), "a", "")
			wantErr(t, err, ErrRootOutside)
			_, err = c.List(context.Background(), "", 10, 0)
			wantErr(t, err, ErrRootOutside)
		})
	}
}

func TestADocsFolderThatLinksOutLaterIsRefused(t *testing.T) {
	elsewhere := writeCorpus(t, map[string]string{"a.md": "# A\n\nsecret\n"})
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "docs", "a.md"), "# A\n\nours\n")
	c := openCorpus(t, Options{ProjectRoot: project, RefreshInterval: time.Hour})
	if got := listSlugs(t, c, ""); !equalSlugs(got, []string{"a"}) {
		t.Fatalf("listed %q", got)
	}
	if err := os.RemoveAll(filepath.Join(project, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(project, "docs")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	d, err := c.Get(context.Background(), "a", "")
	if !errors.Is(err, ErrRootOutside) || strings.Contains(d.Content, "secret") {
		t.Fatalf("Get after the swap = %q, %v; want ErrRootOutside", d.Content, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Exclude: []string{"[unclosed"}},
		{MaxFileBytes: -1},
		{MaxDocs: -1},
	} {
		if _, err := Open(o); err == nil {
			t.Errorf("Open(%+v) accepted bad options", o)
		}
	}
}

func TestAFileWithAnOverlongSlugIsSkipped(t *testing.T) {
	long := strings.Repeat("d", 200) + "/" + strings.Repeat("e", 200) + "/" + strings.Repeat("f", 200) + ".md"
	root := writeCorpus(t, map[string]string{"a.md": "# A\n", long: "# Long\n"})
	info, err := openCorpus(t, Options{Root: root}).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.DocumentCount != 1 || info.Skipped.OverLimit != 1 {
		t.Fatalf("info = %+v", info)
	}
}
