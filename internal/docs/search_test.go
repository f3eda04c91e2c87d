package docs

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestSearchRanking(t *testing.T) {
	c := openFixture(t)
	tests := []struct {
		name        string
		query       string
		wantSlugs   []string
		wantSection string // of the first hit
	}{
		{
			name:        "a heading hit outranks body mentions and names its section",
			query:       "retention",
			wantSlugs:   []string{"reference/storage", "guides", "guides/setup"},
			wantSection: "retention-policy",
		},
		{
			name:        "a title hit outranks repeated body mentions",
			query:       "glossary",
			wantSlugs:   []string{"reference/glossary", "guides/setup"},
			wantSection: "",
		},
		{
			name:        "a word found only in a front-matter title finds its document",
			query:       "lexicon",
			wantSlugs:   []string{"reference/glossary"},
			wantSection: "",
		},
		{
			name:        "a hash line inside a code fence counts as body text, below a real heading",
			query:       "fake",
			wantSlugs:   []string{"reference/testing", "guides/shell"},
			wantSection: "fake-exporters",
		},
		{
			name:      "excluded, hidden, underscored and non-Markdown files are never found",
			query:     "zeppelin",
			wantSlugs: nil,
		},
		{
			name:      "a prefix of a word does not match",
			query:     "retent",
			wantSlugs: nil,
		},
		{
			name:        "matching ignores case",
			query:       "RETENTION",
			wantSlugs:   []string{"reference/storage", "guides", "guides/setup"},
			wantSection: "retention-policy",
		},
		{
			name:      "a query of punctuation only matches nothing",
			query:     "?!… --",
			wantSlugs: nil,
		},
		{
			name:        "words in several fields add up",
			query:       "configure receiver",
			wantSlugs:   []string{"guides/setup"},
			wantSection: "configure-the-receiver",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := search(t, c, tt.query)
			if got := hitSlugs(res.Hits); !equalSlugs(got, tt.wantSlugs) {
				t.Fatalf("slugs = %q, want %q", got, tt.wantSlugs)
			}
			if res.Total != len(tt.wantSlugs) {
				t.Errorf("total = %d, want %d", res.Total, len(tt.wantSlugs))
			}
			if len(res.Hits) > 0 && res.Hits[0].Section != tt.wantSection {
				t.Errorf("section = %q, want %q", res.Hits[0].Section, tt.wantSection)
			}
			for i := 1; i < len(res.Hits); i++ {
				if res.Hits[i].Score > res.Hits[i-1].Score {
					t.Errorf("hit %d scores %v above hit %d (%v)", i, res.Hits[i].Score, i-1, res.Hits[i-1].Score)
				}
			}
		})
	}
}

func TestSearchCodeFenceSectionIsTheEnclosingHeading(t *testing.T) {
	res := search(t, openFixture(t), "fake")
	shell := res.Hits[1]
	if shell.Slug != "guides/shell" || shell.Section != "examples" {
		t.Fatalf("hit = %+v, want guides/shell in section examples", shell)
	}
}

func TestSearchSnippets(t *testing.T) {
	long := strings.Repeat("filler words here ", 20)
	root := writeCorpus(t, map[string]string{
		"long.md":       "# Long\n\n" + long + "the   Needle\tsits\n\nhere " + long,
		"title-only.md": "---\ntitle: Walrus\ndescription: About large marine mammals.\n---\n\nNothing else.\n",
	})
	c := openCorpus(t, Options{Root: root})
	tests := []struct {
		name, query string
		check       func(t *testing.T, snippet string)
	}{
		{"keeps original case around the first hit", "needle", func(t *testing.T, s string) {
			if !strings.Contains(s, "the Needle sits") {
				t.Errorf("snippet %q lacks the hit in original case", s)
			}
		}},
		{"collapses whitespace", "needle", func(t *testing.T, s string) {
			if strings.Contains(s, "  ") || strings.ContainsAny(s, "\n\t") {
				t.Errorf("snippet %q has uncollapsed whitespace", s)
			}
		}},
		{"is bounded and marks both cuts", "needle", func(t *testing.T, s string) {
			if len(s) > 2*snippetContext+len("Needle")+2*len("…") {
				t.Errorf("snippet is %d bytes: %q", len(s), s)
			}
			if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
				t.Errorf("snippet %q does not mark its cuts", s)
			}
		}},
		{"falls back to the description for a title-only hit", "walrus", func(t *testing.T, s string) {
			if s != "About large marine mammals." {
				t.Errorf("snippet = %q", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := search(t, c, tt.query)
			if len(res.Hits) != 1 {
				t.Fatalf("hits = %+v", res.Hits)
			}
			tt.check(t, res.Hits[0].Snippet)
		})
	}
}

func TestSearchTiesAreOrderedBySlug(t *testing.T) {
	body := "# Same\n\nIdentical text about otters.\n"
	root := writeCorpus(t, map[string]string{"c.md": body, "a.md": body, "b/x.md": body})
	res := search(t, openCorpus(t, Options{Root: root}), "otters")
	if got, want := hitSlugs(res.Hits), []string{"a", "b/x", "c"}; !equalSlugs(got, want) {
		t.Fatalf("slugs = %q, want %q", got, want)
	}
	if res.Hits[0].Score != res.Hits[2].Score {
		t.Fatalf("identical documents score differently: %v", res.Hits)
	}
}

func TestSearchPagesConcatenateToTheWholeRanking(t *testing.T) {
	c := openFixture(t)
	ctx := context.Background()
	all, err := c.Search(ctx, "runlens spans receiver", 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if all.Total < 4 {
		t.Fatalf("fixture query matches only %d documents", all.Total)
	}
	var paged []string
	for offset := 0; offset < all.Total; offset += 2 {
		res, err := c.Search(ctx, "runlens spans receiver", 2, offset)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != all.Total || res.Fingerprint != all.Fingerprint {
			t.Fatalf("page at %d: total %d fingerprint %s, want %d %s", offset, res.Total, res.Fingerprint, all.Total, all.Fingerprint)
		}
		paged = append(paged, hitSlugs(res.Hits)...)
	}
	if got := hitSlugs(all.Hits); !equalSlugs(paged, got) {
		t.Fatalf("pages = %q, whole = %q", paged, got)
	}
	past, err := c.Search(ctx, "runlens", 5, 1000)
	if err != nil || len(past.Hits) != 0 {
		t.Fatalf("offset past the end: %v hits, err %v", len(past.Hits), err)
	}
}

func TestRankKeepsExactlyThePrefixOfTheFullRanking(t *testing.T) {
	words := []string{"alpha", "beta", "gamma", "delta"}
	files := make(map[string]string)
	for i := range 60 {
		// Many documents share a text, so ties broken by slug are everywhere.
		var b strings.Builder
		for j := range 1 + i%4 {
			b.WriteString(words[(i+j)%len(words)] + " ")
		}
		files[fmt.Sprintf("d%02d.md", (i*37)%60)] = b.String()
	}
	c := openCorpus(t, Options{Root: writeCorpus(t, files)})
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	terms := queryTerms("alpha gamma")
	full, total := c.idx.rank(terms, 1000)
	if total != len(full) || total < 30 {
		t.Fatalf("full ranking has %d of %d", len(full), total)
	}
	for i := 1; i < len(full); i++ {
		if !full[i-1].before(full[i]) {
			t.Fatalf("full ranking out of order at %d", i)
		}
	}
	for _, keep := range []int{1, 2, 7, 29, total - 1, total} {
		got, _ := c.idx.rank(terms, keep)
		if len(got) != keep {
			t.Fatalf("keep %d returned %d", keep, len(got))
		}
		for i := range got {
			if got[i] != full[i] {
				t.Fatalf("keep %d: item %d is %s, want %s", keep, i, got[i].doc.slug, full[i].doc.slug)
			}
		}
	}
}

func TestAHeadingOutranksAPassingMentionInAShortDocument(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"huge.md":    "# Huge\n\n" + strings.Repeat("unrelated filler words ", 5000),
		"stub.md":    "# Stub\n\nSee retention.\n",
		"storage.md": "# Storage\n\nThe store keeps data for a week and then some more.\n\n## Retention\n\nOld data goes.\n",
	})
	res := search(t, openCorpus(t, Options{Root: root}), "retention")
	if got := hitSlugs(res.Hits); !equalSlugs(got, []string{"storage", "stub"}) {
		t.Fatalf("ranking = %q, want the heading first", got)
	}
}
