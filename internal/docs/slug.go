package docs

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSlugBytes bounds slugs: the tool contracts carry at most 512 characters, so a file whose
// slug would be longer is left out rather than listed under a name nobody can ask for.
const maxSlugBytes = 512

// assignSlugs gives every Markdown file (slash path relative to the root) its slug. A slug is
// the path without ".md"; "x/index.md" and "x/README.md" answer to the folder slug "x" so links
// to a folder keep working. When two files want the same slug the plain file "x.md" wins, then
// index.md, then README.md; a loser keeps its full path slug ("x/index"). The result only depends
// on the set of paths, so slugs are stable across refreshes and machines. A file whose every
// candidate is taken (only possible with names differing in the case of their extension) gets no
// slug and is skipped. paths must come in a stable order: the first of such twins wins.
func assignSlugs(paths []string) map[string]string {
	slugs := make(map[string]string, len(paths))
	taken := make(map[string]bool, len(paths))
	type indexFile struct {
		path, folder string
		rank         int
	}
	var indexes []indexFile
	for _, p := range paths {
		stem := strings.TrimSuffix(p, path.Ext(p))
		dir, base := path.Split(stem)
		switch strings.ToLower(base) {
		case "index", "readme":
			folder := strings.TrimSuffix(dir, "/")
			if folder == "" {
				folder = "index"
			}
			rank := 1
			if strings.EqualFold(base, "readme") {
				rank = 2
			}
			indexes = append(indexes, indexFile{path: p, folder: folder, rank: rank})
		default:
			if !taken[stem] { // "x.md" and "x.MD" on a case-sensitive file system
				slugs[p] = stem
				taken[stem] = true
			}
		}
	}
	sort.Slice(indexes, func(i, j int) bool {
		if indexes[i].rank != indexes[j].rank {
			return indexes[i].rank < indexes[j].rank
		}
		return indexes[i].path < indexes[j].path
	})
	for _, f := range indexes {
		for _, candidate := range []string{f.folder, strings.TrimSuffix(f.path, path.Ext(f.path))} {
			if !taken[candidate] {
				slugs[f.path] = candidate
				taken[candidate] = true
				break
			}
		}
	}
	return slugs
}

// isMarkdownName reports whether a file name is a Markdown document of the corpus.
func isMarkdownName(name string) bool {
	return strings.EqualFold(path.Ext(name), ".md") && len(name) > len(".md")
}

// slugName reports whether a file or folder name can be part of a slug that cleanSlug accepts
// as it is, so every listed document can be fetched by the slug it is listed under.
func slugName(name string) bool {
	clean, ok := cleanSlug(name)
	return ok && clean == name
}

// cleanSlug checks a slug supplied by a caller and returns it in the form the index uses. Slugs
// are only looked up, never joined into paths, so this is a second line of defence: anything that
// looks like traversal or an encoded separator is refused outright instead of being normalised
// into something that happens to exist.
func cleanSlug(slug string) (string, bool) {
	if slug == "" || len(slug) > maxSlugBytes || !utf8.ValidString(slug) {
		return "", false
	}
	if strings.HasPrefix(slug, "/") || strings.ContainsRune(slug, '\\') {
		return "", false
	}
	for _, r := range slug {
		if unicode.IsControl(r) {
			return "", false
		}
	}
	lower := strings.ToLower(slug)
	for _, enc := range []string{"%2e", "%2f", "%5c", "%25", "%00"} {
		if strings.Contains(lower, enc) {
			return "", false
		}
	}
	for _, seg := range strings.Split(slug, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return slug, true
}

// headingSlugger turns heading text into anchors the way GitHub does, so a link copied from a
// rendered page names the same section: lowercase, punctuation dropped, spaces become hyphens,
// and a repeated heading gets -1, -2, … in document order.
type headingSlugger struct {
	seen map[string]bool
	// next is, per base, the least suffix not yet known to be taken, so a heading repeated
	// thousands of times costs one probe rather than one per earlier copy. A suffix once taken
	// stays taken, so skipping the ones already tried changes no slug.
	next map[string]int
}

func (h *headingSlugger) slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	base := b.String()
	if base == "" {
		base = "section"
	}
	if h.seen == nil {
		h.seen, h.next = make(map[string]bool), make(map[string]int)
	}
	slug := base
	if h.seen[slug] {
		n := max(h.next[base], 1)
		for slug = base + "-" + strconv.Itoa(n); h.seen[slug]; slug = base + "-" + strconv.Itoa(n) {
			n++
		}
		h.next[base] = n + 1
	}
	h.seen[slug] = true
	return slug
}
