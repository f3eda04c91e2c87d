package docs

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Text a reader never sees as prose — HTML comments, tables of contents — is neither searched
// nor shown in snippets.
func TestCommentsAndTablesOfContentsAreNotText(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"deploy.md": "# Deploying\n\n<!-- reviewer: rotate the staging keys before launch -->\n\n" +
			"- [Prepare](#prepare)\n- [Release](#release)\n  - [Rollback](#rollback)\n\n[TOC]\n\n" +
			"## Prepare\n\nBuild the image and push it to the registry before the release.\n\n" +
			"## Release\n\nRun the release job.\n\n## Rollback\n\nRedeploy the previous image.\n",
		"links.md": "# Links\n\n- [Prepare the registry](https://example.org/registry)\n- [Release notes](#notes)\n\n## Notes\n\nNothing yet.\n",
	})
	c := openCorpus(t, Options{Root: root})
	ctx := context.Background()
	if res, err := c.Search(ctx, "reviewer staging", 10, 0); err != nil || res.Total != 0 {
		t.Fatalf("an HTML comment was indexed: %+v, %v", res, err)
	}
	res, err := c.Search(ctx, "image", 10, 0)
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search image: %+v, %v", res, err)
	}
	if s := res.Hits[0].Snippet; strings.Contains(s, "Prepare Release") || strings.Contains(s, "reviewer") || strings.Contains(s, "[TOC]") {
		t.Fatalf("the snippet shows a table of contents or a comment: %q", s)
	}
	// A list that links elsewhere is content, not a table of contents.
	if res, err := c.Search(ctx, "registry", 10, 0); err != nil || !slices.ContainsFunc(res.Hits, func(h Hit) bool { return h.Slug == "links" }) {
		t.Fatalf("a list of external links was dropped: %+v, %v", res, err)
	}
}

// A query with a word no document contains says so, and each hit names the words it matched,
// so a hit on one word of two is not mistaken for a match of both.
func TestSearchSaysWhichWordsMatched(t *testing.T) {
	c := openFixture(t)
	res, err := c.Search(context.Background(), "retention zorblax", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Unmatched, []string{"zorblax"}) {
		t.Fatalf("unmatched %v, want [zorblax]", res.Unmatched)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hit for retention")
	}
	for _, h := range res.Hits {
		if !slices.Equal(h.Matched, []string{"retention"}) {
			t.Fatalf("hit %s matched %v, want [retention]", h.Slug, h.Matched)
		}
	}
}
