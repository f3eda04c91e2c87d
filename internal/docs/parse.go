package docs

import (
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

const (
	// maxTitleRunes bounds titles and heading names, which end up in every listing.
	maxTitleRunes = 200
	// maxDescriptionRunes bounds the description, which falls back to the first paragraph.
	maxDescriptionRunes = 200
)

// markdown is shared by every parse: goldmark's parser is safe for concurrent use once built.
// CommonMark alone is enough to tell headings from code; no extension changes what a heading is.
// It is built on first parse, so a serve that never indexes docs does not build it.
var markdown = sync.OnceValue(goldmark.DefaultParser)

// document is one indexed Markdown file. It is immutable once added to the index, except for its
// slug, which only changes under the index's write lock when a slug collision resolves anew.
type document struct {
	slug, path  string
	modTime     int64
	size        int64
	title       string
	description string
	sections    []section
	// text is the document's readable text (headings, paragraphs, list items, code) in order,
	// one block per line. It feeds snippets and best-section matching, never the answer itself.
	text string
	// bodyLen is the number of body tokens, for length normalisation in ranking.
	bodyLen int
	// terms lists the index entries this document has postings in, so removal is exact.
	terms []*termEntry
}

// section is one top-level heading of a document.
type section struct {
	slug, title string
	level       int
	// start and end delimit the section in the Markdown body, subsections included: what get_doc
	// returns when asked for it.
	start, end int
	// textStart, headingEnd and textEnd delimit, in document.text, the heading and the section's
	// own text up to the next heading of any level: what search looks at to name a section.
	textStart, headingEnd, textEnd int
}

// parseDocument reads a Markdown file's metadata, sections and text. name is the slash path
// relative to the docs root, used for the title when nothing better exists. It also returns the
// body (the source without front matter), which section offsets refer to, and the front matter.
func parseDocument(name string, src []byte) (*document, []byte, frontMatter) {
	fm, body := splitFrontMatter(src)
	// The parser reads a tamed copy; offsets and text are taken from body, which it mirrors.
	root := markdown().Parse(text.NewReader(tame(body)))

	d := &document{path: name}
	var (
		out      strings.Builder
		slugger  headingSlugger
		firstH1  string
		firstPar string
		open     []int // indexes into d.sections whose body range is still open
	)
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok {
			title := clip(collapseSpace(inlineText(h, body)), maxTitleRunes)
			start := headingStart(h, body)
			for len(open) > 0 && d.sections[open[len(open)-1]].level >= h.Level {
				d.sections[open[len(open)-1]].end = start
				open = open[:len(open)-1]
			}
			if len(d.sections) > 0 {
				d.sections[len(d.sections)-1].textEnd = out.Len()
			}
			s := section{slug: slugger.slug(title), title: title, level: h.Level, start: start, textStart: out.Len()}
			out.WriteString(title)
			s.headingEnd = out.Len()
			out.WriteByte('\n')
			d.sections = append(d.sections, s)
			open = append(open, len(d.sections)-1)
			if h.Level == 1 && firstH1 == "" {
				firstH1 = title
			}
			continue
		}
		before := out.Len()
		blockText(n, body, &out)
		if out.Len() > before {
			out.WriteByte('\n')
		}
		if _, ok := n.(*ast.Paragraph); ok && firstPar == "" {
			firstPar = out.String()[before:]
		}
	}
	for _, i := range open {
		d.sections[i].end = len(body)
	}
	if len(d.sections) > 0 {
		d.sections[len(d.sections)-1].textEnd = out.Len()
	}
	d.text = out.String()
	d.title = firstNonEmpty(clip(collapseSpace(fm.title), maxTitleRunes), firstH1, fileTitle(name))
	d.description = clip(collapseSpace(firstNonEmpty(fm.description, firstPar)), maxDescriptionRunes)
	return d, body, fm
}

// headingStart finds the first byte of the line a heading starts on, so a section's content
// begins with its own "#" line (or, for a setext heading, its text line).
func headingStart(h *ast.Heading, src []byte) int {
	start := h.Pos()
	if lines := h.Lines(); lines.Len() > 0 && (start < 0 || lines.At(0).Start < start) {
		start = lines.At(0).Start
	}
	start = max(0, min(start, len(src)))
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	return start
}

// blockText appends the readable text of a block: code and raw HTML verbatim (a word inside a
// fence is body text, and a "#" line in it is not a heading), paragraphs without their markup.
// What a reader never sees as text is left out: HTML comments, and tables of contents (a list
// of nothing but links to headings of the same page, or a [TOC] marker).
func blockText(n ast.Node, src []byte, out *strings.Builder) {
	if isTableOfContents(n, src) {
		return
	}
	switch n := n.(type) {
	case *ast.HTMLBlock:
		if n.HTMLBlockType == ast.HTMLBlockType2 { // <!-- a comment -->
			return
		}
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			out.Write(seg.Value(src))
		}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			out.Write(seg.Value(src))
		}
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		out.WriteString(inlineText(n, src))
	case *ast.ThematicBreak:
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if out.Len() > 0 && !strings.HasSuffix(out.String(), "\n") {
				out.WriteByte('\n')
			}
			blockText(c, src, out)
		}
	}
}

// isTableOfContents reports whether a block is a table of contents: a [TOC]-style marker
// paragraph, or a list whose every item is only links to anchors of the same page (#…),
// nested lists included.
func isTableOfContents(n ast.Node, src []byte) bool {
	switch n := n.(type) {
	case *ast.Paragraph:
		t := strings.ToLower(strings.TrimSpace(inlineText(n, src)))
		return t == "[toc]" || t == "[[toc]]" || t == "[[_toc_]]" || t == "${toc}"
	case *ast.List:
		return n.ChildCount() > 0 && onlyAnchorLinks(n, src)
	}
	return false
}

// onlyAnchorLinks reports whether n holds at least one link and nothing but links to #anchors
// (and the list structure around them).
func onlyAnchorLinks(n ast.Node, src []byte) bool {
	links := 0
	ok := true
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil && ok; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Link:
				if !strings.HasPrefix(string(c.Destination), "#") {
					ok = false
				}
				links++
			case *ast.Text:
				if strings.TrimSpace(string(c.Segment.Value(src))) != "" {
					ok = false
				}
			case *ast.List, *ast.ListItem, *ast.Paragraph, *ast.TextBlock:
				walk(c)
			default:
				ok = false
			}
		}
	}
	walk(n)
	return ok && links > 0
}

// inlineText is the text a reader sees in a paragraph or heading: link and emphasis markup
// dropped, code spans kept, raw inline HTML left out.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.Label(src))
			case *ast.RawHTML:
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// fileTitle is the last resort for a title: the file name, or the folder name for an index.
func fileTitle(name string) string {
	stem := strings.TrimSuffix(name, path.Ext(name))
	dir, base := path.Split(stem)
	if lower := strings.ToLower(base); (lower == "index" || lower == "readme") && dir != "" {
		base = path.Base(strings.TrimSuffix(dir, "/"))
	}
	return base
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// collapseSpace joins the words of s with single spaces.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens s to at most n runes, preferring a word boundary, and marks the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
