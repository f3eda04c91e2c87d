package docs

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestAssignSlugs(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  map[string]string
	}{
		{"a path without its extension", []string{"guides/setup.md", "top.MD"},
			map[string]string{"guides/setup.md": "guides/setup", "top.MD": "top"}},
		{"an index answers to its folder", []string{"guides/index.md", "index.md"},
			map[string]string{"guides/index.md": "guides", "index.md": "index"}},
		{"a README answers to its folder", []string{"guides/README.md", "README.md"},
			map[string]string{"guides/README.md": "guides", "README.md": "index"}},
		{"a plain file beats an index for the folder slug", []string{"guides.md", "guides/index.md"},
			map[string]string{"guides.md": "guides", "guides/index.md": "guides/index"}},
		{"an index beats a README", []string{"guides/README.md", "guides/index.md"},
			map[string]string{"guides/README.md": "guides/README", "guides/index.md": "guides"}},
		{"nested indexes each find a slug", []string{"a.md", "a/index.md", "a/index/index.md"},
			map[string]string{"a.md": "a", "a/index.md": "a/index", "a/index/index.md": "a/index/index"}},
		{"twins differing in the case of the extension: the first wins", []string{"x.MD", "x.md", "a.md", "a/index.MD", "a/index.md"},
			map[string]string{"x.MD": "x", "a.md": "a", "a/index.MD": "a/index"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := assignSlugs(tt.paths); !maps.Equal(got, tt.want) {
				t.Fatalf("slugs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCleanSlug(t *testing.T) {
	tests := []struct {
		slug string
		ok   bool
	}{
		{"guides/setup", true},
		{"100%-coverage", true},
		{"über/uns", true},
		{"../x", false},
		{"a/../b", false},
		{"/abs", false},
		{`a\b`, false},
		{"a%2Fb", false},
		{"%2e%2e", false},
		{"a%5cb", false},
		{"a%252fb", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a//b", false},
		{"a/", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, ok := cleanSlug(tt.slug); ok != tt.ok {
			t.Errorf("cleanSlug(%q) ok = %v, want %v", tt.slug, ok, tt.ok)
		}
	}
}

// Every listed document is fetched by the slug it is listed under. A name no slug can carry is
// not listed (and counted), rather than listed under a slug get_doc refuses.
func TestEveryListedSlugRoundTrips(t *testing.T) {
	names := []string{
		"plain.md", "new\nline.md", "tab\there.md", "back\\slash.md", "pct%2e.md", "pct%25x.md",
		"bad\xffutf8.md", "ok%.md", "spaced name.md", "ünïcode.md", "dir\nname/inner.md",
		"dir/index.md", "a.md.md", "esc\x1b.md",
	}
	files := map[string]string{}
	for _, n := range names {
		files[n] = "# T\n"
	}
	root := t.TempDir()
	for n, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755); err != nil {
			t.Skipf("the file system refuses %q: %v", n, err)
		}
		if err := os.WriteFile(filepath.Join(root, n), []byte(content), 0o644); err != nil {
			t.Skipf("the file system refuses %q: %v", n, err)
		}
	}
	c := openCorpus(t, Options{Root: root})
	slugs := listSlugs(t, c, "")
	for _, s := range slugs {
		if _, err := c.Get(context.Background(), s, ""); err != nil {
			t.Errorf("Get(%q) of a listed slug: %v", s, err)
		}
	}
	want := []string{"a.md", "dir", "ok%", "plain", "spaced name", "ünïcode"}
	if !equalSlugs(slugs, want) {
		t.Errorf("listed %q, want %q", slugs, want)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Skipped.BadNames != 8 {
		t.Errorf("skipped %+v, want 8 bad names", info.Skipped)
	}
}
