package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// SearchDocs implements gen.Flows: ranked documents for a free-text query, each naming its best
// section so get_doc can fetch just that.
func (f *Flows) SearchDocs(ctx context.Context, in gen.SearchDocsInput) (gen.SearchDocsOutput, error) {
	corpus, err := f.corpus()
	if err != nil {
		return gen.SearchDocsOutput{}, err
	}
	offset, bound, err := f.docsCursor(ctx, corpus, in.Cursor, gen.ToolSearchDocs, in)
	if err != nil {
		return gen.SearchDocsOutput{}, err
	}
	limit := in.Limit
	if in.Detail == gen.DetailSummary {
		limit = 1 // only the total is reported
	}
	res, err := corpus.Search(ctx, in.Query, limit, offset)
	if err != nil {
		return gen.SearchDocsOutput{}, docsErr(err)
	}
	if bound != "" && bound != res.Fingerprint {
		return gen.SearchDocsOutput{}, &shape.CursorError{Reason: shape.CursorDataChanged}
	}
	out := gen.SearchDocsOutput{UnmatchedTerms: res.Unmatched}
	if in.Detail == gen.DetailSummary {
		out.Page = gen.Page{Total: ptr(int64(res.Total)), Truncated: res.Total > 0}
		return out, nil
	}
	for _, h := range res.Hits {
		out.Matches = append(out.Matches, gen.SearchDocsOutputMatch{
			Slug: h.Slug, Title: h.Title, Section: optStr(h.Section), Snippet: h.Snippet, Score: h.Score,
			MatchedTerms: h.Matched,
		})
	}
	out.Page = f.docsPage(ctx, "matches", gen.ToolSearchDocs, in, res.Fingerprint, offset, len(out.Matches), res.Total)
	out.Count = out.Page.Returned
	return out, nil
}

// ListDocs implements gen.Flows: the documents in slug order, with what the corpus is.
func (f *Flows) ListDocs(ctx context.Context, in gen.ListDocsInput) (gen.ListDocsOutput, error) {
	corpus, err := f.corpus()
	if err != nil {
		return gen.ListDocsOutput{}, err
	}
	offset, bound, err := f.docsCursor(ctx, corpus, in.Cursor, gen.ToolListDocs, in)
	if err != nil {
		return gen.ListDocsOutput{}, err
	}
	limit := in.Limit
	if in.Detail == gen.DetailSummary {
		limit = 1
	}
	res, err := corpus.List(ctx, deref(in.Prefix), limit, offset)
	if err != nil {
		return gen.ListDocsOutput{}, docsErr(err)
	}
	fp := res.Info.Fingerprint
	if bound != "" && bound != fp {
		return gen.ListDocsOutput{}, &shape.CursorError{Reason: shape.CursorDataChanged}
	}
	out := gen.ListDocsOutput{Corpus: gen.ListDocsOutputCorpus{
		Root: res.Info.Root, DocumentCount: int64(res.Info.DocumentCount), Fingerprint: fp,
	}}
	if in.Detail == gen.DetailSummary {
		out.Page = gen.Page{Total: ptr(int64(res.Total)), Truncated: res.Total > 0}
		return out, nil
	}
	for _, d := range res.Docs {
		out.Docs = append(out.Docs, gen.ListDocsOutputDoc{Slug: d.Slug, Title: d.Title, Description: d.Description})
	}
	out.Page = f.docsPage(ctx, "docs", gen.ToolListDocs, in, fp, offset, len(out.Docs), res.Total)
	out.Count = out.Page.Returned
	return out, nil
}

// GetDoc implements gen.Flows: one document or section as Markdown, cut to the answer's budget
// with a note saying how to read on, and the document's headings so it can be read in parts.
func (f *Flows) GetDoc(ctx context.Context, in gen.GetDocInput) (gen.GetDocOutput, error) {
	corpus, err := f.corpus()
	if err != nil {
		return gen.GetDocOutput{}, err
	}
	doc, err := corpus.Get(ctx, in.Slug, deref(in.Section))
	if err != nil {
		return gen.GetDocOutput{}, docsErr(err)
	}
	offset := 0
	if in.Cursor != nil && *in.Cursor != "" {
		// Bound to the document's own content, not the whole corpus: an edit elsewhere does not
		// stop anyone reading on, an edit of this document does.
		if offset, err = f.Cursors.Decode(*in.Cursor, gen.ToolGetDoc, in, doc.Version); err != nil {
			return gen.GetDocOutput{}, err
		}
		if offset > len(doc.Content) {
			return gen.GetDocOutput{}, &shape.CursorError{Reason: shape.CursorMalformed}
		}
	}
	out := gen.GetDocOutput{Slug: doc.Slug, Title: doc.Title, Section: optStr(doc.Section)}
	cut := docCut(doc, offset, &out)
	out.Content = cut.text
	out.Page = gen.Page{Returned: 1, Truncated: cut.truncated}
	if cut.next < len(doc.Content) {
		c, err := f.Cursors.Encode(gen.ToolGetDoc, in, doc.Version, cut.next)
		if err != nil {
			return gen.GetDocOutput{}, fmt.Errorf("get doc: %w", err)
		}
		out.Page.NextCursor = &c
	}
	// The page describes the content, not the sections array: if the budget ever had to drop
	// headings, the content cursor stays right.
	callctx.SetPaging(ctx, &shape.Paging{})
	return out, nil
}

// corpus returns the docs port or the error the docs tools answer without one.
func (f *Flows) corpus() (*docs.Corpus, error) {
	if f.Docs == nil {
		return nil, toolerr.New(gen.ErrorCodeDocsCorpusNotFound, "no docs corpus is configured").
			WithHint("set docs.root in runlens.json to the project's Markdown folder; the doctor tool checks it")
	}
	return f.Docs, nil
}

// docsCursor decodes a search or list cursor against the corpus as it is now. It returns the
// offset and the fingerprint it was checked against ("" for a first page), which the caller
// compares with the fingerprint of the page it then reads, so a change in between fails closed.
func (f *Flows) docsCursor(ctx context.Context, corpus *docs.Corpus, cursor *string, tool string, in any) (int, string, error) {
	if cursor == nil || *cursor == "" {
		return 0, "", nil
	}
	info, err := corpus.Info(ctx)
	if err != nil {
		return 0, "", docsErr(err)
	}
	offset, err := f.Cursors.Decode(*cursor, tool, in, info.Fingerprint)
	if err != nil {
		return 0, "", err
	}
	return offset, info.Fingerprint, nil
}

// docsPage builds the page of a search or list answer and tells the disclosure layer how to
// re-mint the cursor if the byte budget drops items from field.
func (f *Flows) docsPage(ctx context.Context, field, tool string, in any, fp string, offset, returned, total int) gen.Page {
	cursorAt := func(n int) (string, error) {
		if n <= 0 || offset+n >= total {
			return "", nil
		}
		return f.Cursors.Encode(tool, in, fp, offset+n)
	}
	callctx.SetPaging(ctx, &shape.Paging{Field: field, Count: "count", Remint: cursorAt})
	p := gen.Page{Returned: int64(returned), Total: ptr(int64(total))}
	if c, err := cursorAt(returned); err == nil && c != "" {
		p.NextCursor = &c
	}
	return p
}

// docsErr maps the corpus's errors to the docs tools' error codes, each with what to do next.
func docsErr(err error) error {
	var (
		corpusMissing  *docs.CorpusNotFoundError
		rootOutside    *docs.RootOutsideError
		docMissing     *docs.DocNotFoundError
		sectionMissing *docs.SectionNotFoundError
	)
	switch {
	case errors.As(err, &rootOutside):
		// A configuration problem, answered as one: the folder is not read at all.
		return toolerr.Newf(gen.ErrorCodeConfigInvalid, "%s; runlens serves documentation from inside the project only", rootOutside.Error()).
			WithHint("set docs.root in runlens.json to a folder inside the project (a symbolic link must point inside it too); the doctor tool checks it")
	case errors.As(err, &corpusMissing):
		return toolerr.Newf(gen.ErrorCodeDocsCorpusNotFound, "the docs folder %s does not exist or is not readable", corpusMissing.Root).
			WithHint("create it, or set docs.root in runlens.json to the project's Markdown folder; the doctor tool checks it")
	case errors.As(err, &docMissing):
		hint := "find slugs with search_docs or list_docs"
		choices := boundedChoices(docMissing.Suggestions)
		if len(choices) > 0 {
			hint = "did you mean " + strings.Join(choices, ", ") + "? Otherwise " + hint
		}
		return toolerr.Newf(gen.ErrorCodeDocNotFound, "no document has the slug %q", docMissing.Slug).
			WithHint(hint).WithChoices(choices)
	case errors.As(err, &sectionMissing):
		choices := boundedChoices(sectionMissing.Available)
		hint := "the document has no headings: call get_doc without section"
		if len(choices) > 0 {
			hint = "ask for one of its sections by slug: " + strings.Join(choices, ", ")
			if len(choices) < len(sectionMissing.Available)+sectionMissing.More {
				hint += ", …"
			}
		}
		return toolerr.Newf(gen.ErrorCodeSectionNotFound, "document %q has no section %q", sectionMissing.Slug, sectionMissing.Section).
			WithHint(hint).WithChoices(choices)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	default:
		return fmt.Errorf("read docs: %w", err)
	}
}

// Bounds of the choices an error lists, from the error schema (items ≤ 256 characters) and the
// hint they are repeated in (≤ 1,024).
const (
	maxChoiceLen   = 256
	maxChoiceBytes = 800
)

// boundedChoices keeps the leading values that fit the error schema and the hint.
func boundedChoices(values []string) []string {
	var out []string
	used := 0
	for _, v := range values {
		if len(v) > maxChoiceLen {
			continue
		}
		if used += len(v) + 2; used > maxChoiceBytes {
			break
		}
		out = append(out, v)
	}
	return out
}

// Bounds of a get_doc answer.
const (
	// maxDocSections is the schema's bound on the sections array.
	maxDocSections = 200
	// docReserve is budget kept free of content: the read-on note, the cursor, and what
	// redaction may add when it replaces a secret with a longer marker.
	docReserve = 1536
	// minDocContent is the least content a page carries; headings are dropped before it shrinks
	// below that.
	minDocContent = 4096
)

// contentCut is the part of a document one get_doc answer carries.
type contentCut struct {
	text      string // content from the cursor on, with the read-on note when cut
	next      int    // offset in Doc.Content where the next page starts
	truncated bool   // content or headings were left out
}

// docCut fills out.Sections and cuts the content from offset so the whole answer fits the
// tool's byte budget as JSON. A cut prefers a heading, then a paragraph, then a line boundary
// in the second half of what fits, and ends with a note naming the offset, the cursor and the
// next section, so the reader knows exactly how to read on.
func docCut(doc docs.Doc, offset int, out *gen.GetDocOutput) contentCut {
	budget := shape.LargeStandardBudget
	if t, ok := gen.Lookup(gen.ToolGetDoc); ok && t.Budget.Standard > 0 {
		budget = t.Budget.Standard
	}
	sections := doc.Sections
	cut := contentCut{next: len(doc.Content)}
	if len(sections) > maxDocSections {
		sections, cut.truncated = sections[:maxDocSections], true
	}
	var avail int
	for {
		out.Sections = out.Sections[:0]
		for _, s := range sections {
			out.Sections = append(out.Sections, gen.GetDocOutputSection{Slug: s.Slug, Title: s.Title, Level: s.Level, Bytes: int64(s.Bytes)})
		}
		skeleton, _ := json.Marshal(out) // plain strings and numbers: cannot fail
		avail = budget - len(skeleton) - docReserve
		if avail >= minDocContent || len(sections) == 0 {
			break
		}
		sections, cut.truncated = sections[:len(sections)*3/4], true
	}

	rest := doc.Content[offset:]
	end := jsonPrefix(rest, max(avail, 0))
	if end == len(rest) {
		cut.text = rest
		return cut
	}
	end = cutBoundary(rest, end)
	cut.next = offset + end
	cut.text = rest[:end] + readOnNote(doc, cut.next)
	cut.truncated = true
	return cut
}

// jsonPrefix returns the length of the longest prefix of s whose JSON string encoding, as
// encoding/json writes it (HTML characters escaped), takes at most limit bytes.
func jsonPrefix(s string, limit int) int {
	used := 0
	for i, r := range s {
		cost := utf8.RuneLen(r)
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"): // an invalid byte
			cost = len(`\ufffd`)
		case r == '\n', r == '\r', r == '\t', r == '"', r == '\\':
			cost = 2
		case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
			cost = len(`\u003c`)
		}
		if used+cost > limit {
			return i
		}
		used += cost
	}
	return len(s)
}

// cutBoundary moves a cut at end back to the start of a heading line, else after a blank line,
// else after a line break, as long as that keeps at least half of the text; else to a rune start.
func cutBoundary(s string, end int) int {
	window, least := s[:end], end/2
	if i := strings.LastIndex(window, "\n#"); i >= least {
		return i + 1
	}
	if i := strings.LastIndex(window, "\n\n"); i >= least {
		return i + 2
	}
	if i := strings.LastIndexByte(window, '\n'); i >= least {
		return i + 1
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return end
}

// readOnNote says where the content was cut and how to read on: the cursor, or the next heading.
func readOnNote(doc docs.Doc, next int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n[runlens: cut at byte %d of %d. To read on, call get_doc again with the same arguments and cursor set to page.nextCursor", next, len(doc.Content))
	for _, s := range doc.Sections {
		if s.Offset >= doc.Offset+next && s.Offset < doc.Offset+len(doc.Content) {
			fmt.Fprintf(&b, ", or ask for section %q to start at the next heading", s.Slug)
			break
		}
	}
	b.WriteString(".]")
	return b.String()
}
