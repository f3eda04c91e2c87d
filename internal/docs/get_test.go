package docs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGetWholeDocument(t *testing.T) {
	d, err := openFixture(t).Get(context.Background(), "guides/setup", "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Slug != "guides/setup" || d.Title != "Setting up runlens" || d.Section != "" {
		t.Fatalf("doc = %+v", d)
	}
	if strings.Contains(d.Content, "title:") || !strings.HasPrefix(d.Content, "\nInstall the binary") {
		t.Errorf("content keeps front matter or lost its start: %q", d.Content[:40])
	}
	if len(d.Version) != 16 {
		t.Errorf("version = %q", d.Version)
	}
	if d.Offset != 0 || d.Size != len(d.Content) {
		t.Errorf("offset %d size %d for content of %d bytes", d.Offset, d.Size, len(d.Content))
	}
	var slugs []string
	for _, s := range d.Sections {
		slugs = append(slugs, s.Slug)
		if got := d.Content[s.Offset : s.Offset+s.Bytes]; !strings.HasPrefix(got, "## "+s.Title) {
			t.Errorf("section %s starts with %q", s.Slug, got[:min(len(got), 20)])
		}
	}
	if want := []string{"install", "configure-the-receiver", "example", "example-1"}; !slices.Equal(slugs, want) {
		t.Errorf("sections = %q, want %q (repeated headings numbered)", slugs, want)
	}
}

func TestGetSection(t *testing.T) {
	c := openFixture(t)
	tests := []struct {
		name, slug, section, wantSlug, wantPrefix string
		wantSuffix                                string
	}{
		{"by heading slug", "reference/storage", "retention-policy", "retention-policy", "## Retention policy", "file small.\n"},
		{"by heading text, case and spacing ignored", "reference/storage", "  retention   POLICY ", "retention-policy", "## Retention policy", "file small.\n"},
		{"by heading text written as an anchor", "reference/storage", "#Retention Policy", "retention-policy", "## Retention policy", "file small.\n"},
		{"a numbered repeat of a heading", "guides/setup", "example-1", "example-1", "## Example", "runlens doctor\n```\n"},
		{"a subsection stops at the next heading of its level or above", "reference/storage", "tuning", "tuning", "### Tuning", "file small.\n"},
		{"a setext heading", "reference/testing", "testing", "testing", "Testing\n=======", "in memory.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := c.Get(context.Background(), tt.slug, tt.section)
			if err != nil {
				t.Fatal(err)
			}
			if d.Section != tt.wantSlug || !strings.HasPrefix(d.Content, tt.wantPrefix) || !strings.HasSuffix(d.Content, tt.wantSuffix) {
				t.Fatalf("section %q content %q", d.Section, d.Content)
			}
			if d.Offset == 0 && tt.wantSlug != "testing" {
				t.Errorf("offset 0 for a section that does not open the document")
			}
		})
	}
}

func TestGetSectionsIgnoreHashLinesInCodeFences(t *testing.T) {
	c := openFixture(t)
	d, err := c.Get(context.Background(), "guides/shell", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Sections {
		if s.Slug == "fake-heading" {
			t.Fatalf("a comment inside a code fence became section %+v", s)
		}
	}
	_, err = c.Get(context.Background(), "guides/shell", "fake heading")
	wantErr(t, err, ErrSectionNotFound)
}

func TestGetSectionNotFoundListsTheSections(t *testing.T) {
	_, err := openFixture(t).Get(context.Background(), "guides/setup", "uninstall")
	var snf *SectionNotFoundError
	if !errors.As(err, &snf) {
		t.Fatalf("error = %v, want a SectionNotFoundError", err)
	}
	if want := []string{"install", "configure-the-receiver", "example", "example-1"}; !slices.Equal(snf.Available, want) || snf.More != 0 {
		t.Fatalf("available = %q (+%d), want %q", snf.Available, snf.More, want)
	}
}

func TestGetSectionNotFoundBoundsTheList(t *testing.T) {
	var b strings.Builder
	for i := range maxListedSections + 5 {
		b.WriteString("## Part " + strings.Repeat("i", i+1) + "\n\ntext\n\n")
	}
	c := openCorpus(t, Options{Root: writeCorpus(t, map[string]string{"many.md": b.String()})})
	_, err := c.Get(context.Background(), "many", "missing")
	var snf *SectionNotFoundError
	if !errors.As(err, &snf) || len(snf.Available) != maxListedSections || snf.More != 5 {
		t.Fatalf("error = %v", err)
	}
}

func TestGetUnknownSlugSuggestsNearbySlugs(t *testing.T) {
	c := openFixture(t)
	tests := []struct {
		name, slug string
		want       []string
	}{
		{"a typo", "guide/setup", []string{"guides/setup"}},
		{"a Markdown file name", "reference/storage.md", nil},
		{"words of a document", "retention-rules", []string{"reference/storage", "guides", "guides/setup"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := c.Get(context.Background(), tt.slug, "")
			if tt.want == nil {
				if err != nil || d.Slug != "reference/storage" {
					t.Fatalf("Get(%q) = %q, %v; want the document", tt.slug, d.Slug, err)
				}
				return
			}
			var dnf *DocNotFoundError
			if !errors.As(err, &dnf) || !errors.Is(err, ErrDocNotFound) {
				t.Fatalf("error = %v", err)
			}
			if !slices.Equal(dnf.Suggestions, tt.want) {
				t.Fatalf("suggestions = %q, want %q", dnf.Suggestions, tt.want)
			}
		})
	}
}
