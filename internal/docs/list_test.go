package docs

import (
	"context"
	"testing"
)

func TestListFixture(t *testing.T) {
	c := openFixture(t)
	want := []string{
		"guides", "guides/setup", "guides/shell", "index",
		"reference/glossary", "reference/no-heading", "reference/storage", "reference/testing",
	}
	if got := listSlugs(t, c, ""); !equalSlugs(got, want) {
		t.Fatalf("slugs = %q, want %q", got, want)
	}
	if got, want := listSlugs(t, c, "reference/"), want[4:]; !equalSlugs(got, want) {
		t.Fatalf("prefix reference/: slugs = %q, want %q", got, want)
	}
	if got := listSlugs(t, c, "nothing/"); len(got) != 0 {
		t.Fatalf("unknown prefix lists %q", got)
	}
}

func TestListTitlesAndDescriptions(t *testing.T) {
	res, err := openFixture(t).List(context.Background(), "", 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	byslug := make(map[string]DocInfo)
	for _, d := range res.Docs {
		byslug[d.Slug] = d
	}
	tests := []struct {
		name, slug, title, description string
	}{
		{"front matter gives title and description", "index", "Runlens documentation", "Start here: what runlens is and where to read on."},
		{"front matter title with the first paragraph as description", "guides/setup", "Setting up runlens",
			"Install the binary and register it with your editor. See the glossary for the terms used here; the glossary is short."},
		{"the first H1 is the title without front matter", "reference/storage", "Storage", "The embedded store keeps spans and logs in SQLite."},
		{"a setext H1 is a title too", "reference/testing", "Testing", "How runlens is tested."},
		{"the file name is the last resort", "reference/no-heading", "no-heading",
			"A document without any heading or front matter takes its title from its file name and its description from this first paragraph."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := byslug[tt.slug]
			if d.Title != tt.title || d.Description != tt.description {
				t.Fatalf("%s = {%q, %q}, want {%q, %q}", tt.slug, d.Title, d.Description, tt.title, tt.description)
			}
		})
	}
}

func TestListPagesAndInfo(t *testing.T) {
	c := openFixture(t)
	ctx := context.Background()
	res, err := c.List(ctx, "", 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Docs) != 2 || res.Total != 8 || res.Docs[0].Slug != "reference/storage" {
		t.Fatalf("page at 6 = %+v (total %d)", res.Docs, res.Total)
	}
	if res.Info.Root != "testdata/corpus" {
		t.Errorf("root = %q, want the path relative to the project root", res.Info.Root)
	}
	if res.Info.DocumentCount != 8 || len(res.Info.Fingerprint) != 16 {
		t.Errorf("info = %+v", res.Info)
	}
	again, err := openFixture(t).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Fingerprint != res.Info.Fingerprint {
		t.Errorf("two opens of the same corpus disagree on the fingerprint: %s, %s", again.Fingerprint, res.Info.Fingerprint)
	}
}
