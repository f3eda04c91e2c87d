package docs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Doc is a document, or one section of it, as Markdown.
type Doc struct {
	Slug        string
	Title       string
	Description string
	// Section is the slug of the section returned, empty for the whole document.
	Section string
	// Content is the Markdown of the document (without front matter) or of the section, the
	// section's subsections included.
	Content string
	// Offset is where Content starts in the whole document's Markdown, in bytes.
	Offset int
	// Size is the length of the whole document's Markdown, in bytes.
	Size int
	// Sections lists every top-level heading of the document, in order.
	Sections []SectionInfo
	// Version names the content read: it changes whenever the document's Markdown does, so a
	// cursor into the middle of a document can be bound to exactly the text it points into.
	Version string
}

// SectionInfo describes one heading so a long document can be read a section at a time.
type SectionInfo struct {
	Slug  string
	Title string
	Level int
	// Offset is where the section starts in the document's Markdown, in bytes.
	Offset int
	// Bytes is the section's length, subsections included.
	Bytes int
}

// Get returns a document by slug, or only the section named by heading text or heading slug when
// section is not empty. The file is read afresh, so the content is current even between
// refreshes; the slug itself is only ever looked up in the index.
func (c *Corpus) Get(ctx context.Context, slug, section string) (Doc, error) {
	if err := c.fresh(ctx); err != nil {
		return Doc{}, err
	}
	clean, ok := cleanSlug(slug)
	if !ok {
		return Doc{}, &DocNotFoundError{Slug: slug}
	}
	c.mu.RLock()
	d := c.idx.bySlug[clean]
	if d == nil {
		d = c.idx.bySlug[strings.TrimSuffix(clean, ".md")]
	}
	var rel string
	if d != nil {
		rel, clean = d.path, d.slug
	}
	c.mu.RUnlock()
	if d == nil {
		return Doc{}, &DocNotFoundError{Slug: slug, Suggestions: c.suggest(clean)}
	}

	data, err := c.read(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errChanged) {
		return Doc{}, &DocNotFoundError{Slug: slug}
	}
	if err != nil {
		return Doc{}, fmt.Errorf("get doc %q: %w", clean, err)
	}
	parsed, body, _ := parseDocument(rel, data)
	doc := Doc{
		Slug:        clean,
		Title:       parsed.title,
		Description: parsed.description,
		Content:     string(body),
		Size:        len(body),
		Sections:    make([]SectionInfo, len(parsed.sections)),
		Version:     contentVersion(body),
	}
	for i, s := range parsed.sections {
		doc.Sections[i] = SectionInfo{Slug: s.slug, Title: s.title, Level: s.level, Offset: s.start, Bytes: s.end - s.start}
	}
	if section == "" {
		return doc, nil
	}
	s, ok := findSection(parsed.sections, section)
	if !ok {
		return Doc{}, sectionNotFound(clean, section, parsed.sections)
	}
	doc.Section, doc.Content, doc.Offset = s.slug, string(body[s.start:s.end]), s.start
	return doc, nil
}

// contentVersion is a short digest of a document's Markdown.
func contentVersion(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:8])
}

// read reads one indexed file through a fresh os.Root, with the same checks as the index build.
func (c *Corpus) read(rel string) ([]byte, error) {
	root, err := c.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := statFile(root, rel)
	if err != nil {
		return nil, err
	}
	if f.size > c.maxBytes {
		return nil, errChanged
	}
	data, _, err := readFile(root, f, c.maxBytes)
	return data, err
}

// findSection matches a requested section against heading slugs, then heading text (case and
// spacing ignored), then the slug the request would have as a heading ("#Setup Steps" finds
// "setup-steps").
func findSection(sections []section, want string) (section, bool) {
	want = strings.TrimSpace(want)
	for _, s := range sections {
		if s.slug == want {
			return s, true
		}
	}
	text := strings.ToLower(collapseSpace(want))
	for _, s := range sections {
		if strings.ToLower(s.title) == text {
			return s, true
		}
	}
	var h headingSlugger
	slug := h.slug(strings.TrimLeft(want, "#"))
	for _, s := range sections {
		if s.slug == slug {
			return s, true
		}
	}
	return section{}, false
}

func sectionNotFound(slug, want string, sections []section) error {
	e := &SectionNotFoundError{Slug: slug, Section: want}
	for i, s := range sections {
		if i == maxListedSections {
			e.More = len(sections) - i
			break
		}
		e.Available = append(e.Available, s.slug)
	}
	return e
}

// suggest offers up to three slugs for a slug that matched nothing: the indexed slugs closest by
// edit distance (a typo, a missing "s"), else the documents that best match the slug's words.
func (c *Corpus) suggest(slug string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	want := []rune(slug)
	if len(want) > maxSuggestRunes {
		return nil
	}
	type near struct {
		slug string
		dist int
	}
	var nearby []near
	limit := max(1, len(want)/3)
	for _, d := range c.idx.sorted {
		if dist := editDistance(want, []rune(d.slug), limit); dist <= limit {
			nearby = append(nearby, near{d.slug, dist})
		}
	}
	slices.SortStableFunc(nearby, func(a, b near) int { return cmp.Compare(a.dist, b.dist) })
	var out []string
	for _, n := range page(nearby, maxSuggestions, 0) {
		out = append(out, n.slug)
	}
	if len(out) > 0 {
		return out
	}
	ranked, _ := c.idx.rank(queryTerms(slug), maxSuggestions)
	for _, r := range ranked {
		out = append(out, r.doc.slug)
	}
	return out
}

const (
	maxSuggestions  = 3
	maxSuggestRunes = 128
)

// editDistance is the Levenshtein distance between a and b, or limit+1 once it must exceed limit.
func editDistance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
