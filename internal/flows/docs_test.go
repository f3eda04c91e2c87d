package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// docsFixture is the docs package's checked-in corpus, read with the globs it is meant for.
var docsFixture = docs.Options{
	Root:    filepath.Join("..", "docs", "testdata", "corpus"),
	Exclude: []string{"archive/**", "*.tmp.md"},
}

func docsFlows(t *testing.T, o docs.Options) *Flows {
	t.Helper()
	c, err := docs.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return New(Deps{Docs: c, Cursors: shape.NewCodec([]byte("docs test key"))})
}

// tempDocs writes files (slash paths to contents) into a fresh docs root that refreshes on
// every call, and returns the flows over it with the root.
func tempDocs(t *testing.T, files map[string]string) (*Flows, string) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		writeDoc(t, root, name, content)
	}
	return docsFlows(t, docs.Options{Root: root, RefreshInterval: time.Nanosecond}), root
}

func writeDoc(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var next time.Time
	if info, err := os.Stat(p); err == nil {
		next = info.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if !next.IsZero() {
		if err := os.Chtimes(p, next, next); err != nil {
			t.Fatal(err)
		}
	}
}

func wantDocsCode(t *testing.T, err error, code gen.ErrorCode) *toolerr.Error {
	t.Helper()
	te, ok := toolerr.As(err)
	if !ok || te.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	if len(te.HintText()) > 1024 || len(te.Choices) > 50 {
		t.Fatalf("error breaks the error schema's bounds: %+v", te)
	}
	return te
}

func TestSearchDocsPagesThroughTheRanking(t *testing.T) {
	f := docsFlows(t, docsFixture)
	ctx := context.Background()
	all, err := f.SearchDocs(ctx, defaults(gen.SearchDocsInput{Query: "runlens spans receiver", Limit: 20}))
	if err != nil {
		t.Fatal(err)
	}
	if all.Count < 4 || all.Page.NextCursor != nil || *all.Page.Total != all.Count {
		t.Fatalf("one big page = %d matches, page %+v", all.Count, all.Page)
	}
	var paged []string
	in := defaults(gen.SearchDocsInput{Query: "runlens spans receiver", Limit: 2})
	for range 10 {
		out, err := f.SearchDocs(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != int64(len(out.Matches)) || out.Page.Returned != out.Count || *out.Page.Total != all.Count {
			t.Fatalf("page = %+v with %d matches", out.Page, len(out.Matches))
		}
		for _, m := range out.Matches {
			paged = append(paged, m.Slug)
		}
		if out.Page.NextCursor == nil {
			break
		}
		in.Cursor = out.Page.NextCursor
	}
	var whole []string
	for _, m := range all.Matches {
		whole = append(whole, m.Slug)
	}
	if !slices.Equal(paged, whole) {
		t.Fatalf("pages %q, one page %q", paged, whole)
	}
	if m := all.Matches[0]; m.Section == nil || m.Snippet == "" || m.Score <= 0 {
		t.Errorf("first match lacks section, snippet or score: %+v", m)
	}
}

func TestSearchDocsCursorsFailClosed(t *testing.T) {
	f, root := tempDocs(t, map[string]string{"a.md": "# A\n\notter\n", "b.md": "# B\n\notter\n", "c.md": "# C\n\notter\n"})
	ctx := context.Background()
	first, err := f.SearchDocs(ctx, defaults(gen.SearchDocsInput{Query: "otter", Limit: 1}))
	if err != nil || first.Page.NextCursor == nil {
		t.Fatalf("first page: %+v, %v", first.Page, err)
	}
	tests := []struct {
		name   string
		in     gen.SearchDocsInput
		change func()
	}{
		{"with another query", defaults(gen.SearchDocsInput{Query: "otters", Limit: 1, Cursor: first.Page.NextCursor}), nil},
		{"with another limit", defaults(gen.SearchDocsInput{Query: "otter", Limit: 2, Cursor: first.Page.NextCursor}), nil},
		{"forged", defaults(gen.SearchDocsInput{Query: "otter", Limit: 1, Cursor: ptr(strings.ToUpper(*first.Page.NextCursor))}), nil},
		{"after the corpus changed", defaults(gen.SearchDocsInput{Query: "otter", Limit: 1, Cursor: first.Page.NextCursor}), func() {
			writeDoc(t, root, "d.md", "# D\n\notter\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change != nil {
				tt.change()
			}
			_, err := f.SearchDocs(ctx, tt.in)
			if !errors.Is(err, shape.ErrCursorInvalid) {
				t.Fatalf("error = %v, want cursor_invalid", err)
			}
		})
	}
}

func TestSearchDocsSummaryCarriesOnlyTheTotal(t *testing.T) {
	out, err := docsFlows(t, docsFixture).SearchDocs(context.Background(), defaults(gen.SearchDocsInput{Query: "retention", Detail: gen.DetailSummary}))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Matches) != 0 || out.Count != 0 || out.Page.Total == nil || *out.Page.Total != 3 || out.Page.NextCursor != nil {
		t.Fatalf("summary = %+v", out)
	}
}

func TestListDocs(t *testing.T) {
	f := docsFlows(t, docsFixture)
	ctx := context.Background()
	out, err := f.ListDocs(ctx, defaults(gen.ListDocsInput{Prefix: ptr("reference/"), Limit: 3}))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture lies outside this package's folder, the project root here: only its name shows.
	if out.Corpus.Root != "corpus" || out.Corpus.DocumentCount != 8 || out.Corpus.Fingerprint == "" {
		t.Errorf("corpus = %+v", out.Corpus)
	}
	if out.Count != 3 || *out.Page.Total != 4 || out.Page.NextCursor == nil || out.Docs[0].Slug != "reference/glossary" {
		t.Fatalf("first page = %+v", out)
	}
	next, err := f.ListDocs(ctx, defaults(gen.ListDocsInput{Prefix: ptr("reference/"), Limit: 3, Cursor: out.Page.NextCursor}))
	if err != nil {
		t.Fatal(err)
	}
	if next.Count != 1 || next.Docs[0].Slug != "reference/testing" || next.Page.NextCursor != nil {
		t.Fatalf("second page = %+v", next)
	}
	_, err = f.ListDocs(ctx, defaults(gen.ListDocsInput{Prefix: ptr("guides/"), Limit: 3, Cursor: out.Page.NextCursor}))
	if !errors.Is(err, shape.ErrCursorInvalid) {
		t.Fatalf("a cursor reused with another prefix: %v", err)
	}
}

func TestDocsErrorCodes(t *testing.T) {
	f := docsFlows(t, docsFixture)
	missing := docsFlows(t, docs.Options{ProjectRoot: t.TempDir(), Root: "docs"})
	ctx := context.Background()
	tests := []struct {
		name        string
		call        func() error
		code        gen.ErrorCode
		wantChoices []string
	}{
		{"an unknown slug suggests near ones", func() error {
			_, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "guide/setup"})
			return err
		}, gen.ErrorCodeDocNotFound, []string{"guides/setup"}},
		{"a traversal slug is not found", func() error {
			_, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "../../etc/passwd"})
			return err
		}, gen.ErrorCodeDocNotFound, nil},
		{"an unknown section lists the sections", func() error {
			_, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "reference/storage", Section: ptr("backups")})
			return err
		}, gen.ErrorCodeSectionNotFound, []string{"storage", "retention-policy", "tuning"}},
		{"a missing docs folder", func() error {
			_, err := missing.SearchDocs(ctx, defaults(gen.SearchDocsInput{Query: "x"}))
			return err
		}, gen.ErrorCodeDocsCorpusNotFound, nil},
		{"no corpus configured", func() error {
			_, err := New(Deps{}).ListDocs(ctx, defaults(gen.ListDocsInput{}))
			return err
		}, gen.ErrorCodeDocsCorpusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := wantDocsCode(t, tt.call(), tt.code)
			if !slices.Equal(te.Choices, tt.wantChoices) {
				t.Errorf("choices = %q, want %q", te.Choices, tt.wantChoices)
			}
			if te.HintText() == "" {
				t.Errorf("no hint in %+v", te)
			}
			for _, c := range tt.wantChoices {
				if !strings.Contains(te.HintText(), c) {
					t.Errorf("hint %q does not name %q", te.HintText(), c)
				}
			}
		})
	}
}

func TestGetDocSmallDocumentIsWhole(t *testing.T) {
	out, err := docsFlows(t, docsFixture).GetDoc(context.Background(), gen.GetDocInput{Slug: "reference/storage", Section: ptr("Retention policy")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Section == nil || *out.Section != "retention-policy" || !strings.HasPrefix(out.Content, "## Retention policy") {
		t.Fatalf("answer = %+v", out)
	}
	if out.Page.Truncated || out.Page.NextCursor != nil || out.Page.Returned != 1 || len(out.Sections) != 3 {
		t.Fatalf("page = %+v, %d sections", out.Page, len(out.Sections))
	}
}

// bigDoc is a document far over the get_doc budget, full of characters JSON escapes.
func bigDoc() string {
	var b strings.Builder
	b.WriteString("# Big\n\nIntro.\n\n")
	for i := range 60 {
		fmt.Fprintf(&b, "## Part %d\n\n", i)
		for j := range 12 {
			fmt.Fprintf(&b, "Line %d of part %d has <tags> & \"quotes\" and a\ttab, ünïcödé too.\n", j, i)
		}
		b.WriteString("\n```go\nif a < b && c > d { return \"x\" }\n```\n\n")
	}
	return b.String()
}

var readOn = regexp.MustCompile(`\n\n\[runlens: cut at byte (\d+) of (\d+)\. [^\]]*\]$`)

func TestGetDocReadsALongDocumentInPages(t *testing.T) {
	content := bigDoc()
	f, _ := tempDocs(t, map[string]string{"big.md": content})
	ctx := context.Background()
	budget := shape.LargeStandardBudget
	for _, section := range []*string{nil, ptr("part-3")} {
		want := content
		if section != nil {
			want = content[strings.Index(content, "## Part 3\n"):strings.Index(content, "## Part 4\n")]
		}
		in := gen.GetDocInput{Slug: "big", Section: section}
		var got strings.Builder
		pages := 0
		for ; pages < 50; pages++ {
			out, err := f.GetDoc(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > budget-docReserve/2 {
				t.Fatalf("page %d is %d bytes, over the %d-byte budget less its reserve", pages, len(raw), budget)
			}
			if out.Page.NextCursor == nil {
				if out.Page.Truncated || readOn.MatchString(out.Content) {
					t.Fatalf("the last page says it was cut: %+v", out.Page)
				}
				got.WriteString(out.Content)
				break
			}
			m := readOn.FindStringSubmatchIndex(out.Content)
			if m == nil || !out.Page.Truncated {
				t.Fatalf("a cut page lacks its note or flag: %q", out.Content[max(0, len(out.Content)-200):])
			}
			got.WriteString(out.Content[:m[0]])
			in.Cursor = out.Page.NextCursor
		}
		if got.String() != want {
			t.Fatalf("section %v: pages joined give %d bytes, want %d", section, got.Len(), len(want))
		}
		if section == nil && pages < 2 {
			t.Fatalf("a %d-byte document came in %d page(s)", len(content), pages+1)
		}
	}
}

func TestGetDocNoteNamesTheNextSection(t *testing.T) {
	f, _ := tempDocs(t, map[string]string{"big.md": bigDoc()})
	out, err := f.GetDoc(context.Background(), gen.GetDocInput{Slug: "big"})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ask for section "(part-\d+)"`).FindStringSubmatch(out.Content)
	if m == nil {
		t.Fatalf("note = %q", out.Content[len(out.Content)-300:])
	}
	cut := readOn.FindStringSubmatch(out.Content)
	if !strings.HasPrefix(bigDoc()[atoi(t, cut[1]):], "## Part ") {
		t.Errorf("the cut at %s is not at a heading", cut[1])
	}
}

func TestGetDocCursorBindsToTheDocument(t *testing.T) {
	f, root := tempDocs(t, map[string]string{"big.md": bigDoc(), "other.md": "# Other\n"})
	ctx := context.Background()
	first, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "big"})
	if err != nil || first.Page.NextCursor == nil {
		t.Fatalf("first page: %+v, %v", first.Page, err)
	}
	writeDoc(t, root, "other.md", "# Other, edited\n")
	if _, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "big", Cursor: first.Page.NextCursor}); err != nil {
		t.Fatalf("an edit of another document broke the cursor: %v", err)
	}
	if _, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "big", Section: ptr("part-1"), Cursor: first.Page.NextCursor}); !errors.Is(err, shape.ErrCursorInvalid) {
		t.Fatalf("a cursor reused for a section: %v", err)
	}
	writeDoc(t, root, "big.md", bigDoc()+"\nmore\n")
	if _, err := f.GetDoc(ctx, gen.GetDocInput{Slug: "big", Cursor: first.Page.NextCursor}); !errors.Is(err, shape.ErrCursorInvalid) {
		t.Fatalf("a cursor into an edited document: %v", err)
	}
}

func TestGetDocBoundsTheSections(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "## %s %d\n\ntext\n\n", strings.Repeat("Long heading words ", 8), i)
	}
	f, _ := tempDocs(t, map[string]string{"many.md": b.String()})
	out, err := f.GetDoc(context.Background(), gen.GetDocInput{Slug: "many"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	if len(out.Sections) > maxDocSections || !out.Page.Truncated || len(raw) > shape.LargeStandardBudget {
		t.Fatalf("%d sections, truncated %v, %d bytes", len(out.Sections), out.Page.Truncated, len(raw))
	}
	if len(out.Content) < minDocContent {
		t.Fatalf("headings crowded the content out: %d bytes", len(out.Content))
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
