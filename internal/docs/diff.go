package docs

// changes is what a refresh has to do to bring the index in line with a walk.
type changes struct {
	jobs      []parseJob
	renames   []rename
	gone      []*document
	conflicts int
	overlong  int
}

// parseJob is a file to (re)parse, and the document it replaces, if any.
type parseJob struct {
	file fileStat
	slug string
	old  *document
}

// rename is a document whose slug changes without its content changing.
type rename struct {
	doc  *document
	slug string
}

// diff compares a walk with the index. When the walk found exactly the indexed paths, which is
// the common case of an edit or of nothing at all, slugs cannot have changed and the work is one
// map lookup per file; otherwise slugs are assigned anew over the whole set.
func (x *index) diff(files []fileStat) changes {
	var ch changes
	same := len(files) == len(x.byPath)
	for i := 0; same && i < len(files); i++ {
		same = x.byPath[files[i].path] != nil
	}
	if same {
		for _, f := range files {
			if d := x.byPath[f.path]; d.modTime != f.modTime || d.size != f.size {
				ch.jobs = append(ch.jobs, parseJob{file: f, slug: d.slug, old: d})
			}
		}
		return ch
	}

	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	slugs := assignSlugs(paths)
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		slug, ok := slugs[f.path]
		switch {
		case !ok:
			ch.conflicts++
			continue
		case len(slug) > maxSlugBytes:
			ch.overlong++
			continue
		}
		seen[f.path] = true
		d := x.byPath[f.path]
		switch {
		case d == nil || d.modTime != f.modTime || d.size != f.size:
			ch.jobs = append(ch.jobs, parseJob{file: f, slug: slug, old: d})
		case d.slug != slug:
			ch.renames = append(ch.renames, rename{doc: d, slug: slug})
		}
	}
	for p, d := range x.byPath {
		if !seen[p] {
			ch.gone = append(ch.gone, d)
		}
	}
	return ch
}
