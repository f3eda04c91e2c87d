package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// addCorpusSeeds adds every Markdown file of the fixture corpus as a seed.
func addCorpusSeeds(f *testing.F) {
	f.Helper()
	_ = filepath.WalkDir(filepath.Join("testdata", "corpus"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isMarkdownName(d.Name()) {
			if data, err := os.ReadFile(path); err == nil {
				f.Add(data)
			}
		}
		return nil
	})
}

// FuzzParseDocument parses arbitrary Markdown with front matter. It never panics, answers within
// a second, keeps titles and descriptions within their bounds, and every section lies inside the
// body in document order.
func FuzzParseDocument(f *testing.F) {
	addCorpusSeeds(f)
	for _, p := range pathological {
		f.Add([]byte(strings.Repeat(p, 2000)))
	}
	f.Add([]byte("---\ntitle: \"A \\\"quoted\\\" title\"\ndescription: >\n  folded\n  text\n---\n# H\n"))
	f.Add([]byte("\ufeff---\ntitle: x\n...\nSetext\n===\n\n## A\n## A\n## A-1\n"))
	f.Add([]byte("- [One](#one)\n- [Two](#two)\n\n# One\n<!-- c -->\n```\n# not\n```\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		start := time.Now()
		d, body, _ := parseDocument("f.md", src)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("parsing %d bytes took %v", len(src), took)
		}
		if n := utf8.RuneCountInString(d.title); n > maxTitleRunes+1 {
			t.Fatalf("title of %d characters", n)
		}
		if n := utf8.RuneCountInString(d.description); n > maxDescriptionRunes+1 {
			t.Fatalf("description of %d characters", n)
		}
		if len(tame(body)) != len(body) {
			t.Fatal("tame changed the length")
		}
		slugs := map[string]bool{}
		prev := 0
		for _, s := range d.sections {
			if s.start < prev || s.start > s.end || s.end > len(body) {
				t.Fatalf("section %q spans [%d, %d) of a %d-byte body after %d", s.title, s.start, s.end, len(body), prev)
			}
			if s.textStart > s.headingEnd || s.headingEnd > s.textEnd || s.textEnd > len(d.text) {
				t.Fatalf("section %q text spans %d..%d..%d of %d", s.title, s.textStart, s.headingEnd, s.textEnd, len(d.text))
			}
			if slugs[s.slug] {
				t.Fatalf("two sections have the slug %q", s.slug)
			}
			slugs[s.slug] = true
			prev = s.start
		}
	})
}

// FuzzSlugs gives the slug rules arbitrary file names: every name the walk keeps makes slugs that
// get_doc accepts as they are, and no two files share one.
func FuzzSlugs(f *testing.F) {
	f.Add("guides/setup.md", "guides/index.md", "guides/README.md")
	f.Add("a.md", "a/index.md", "A.MD")
	f.Add("new\nline.md", "pct%2e.md", "back\\slash.md")
	f.Add("x.md.md", "x.md", "x/README.md")
	f.Add("ünï/cödé.md", "\xff.md", "index.md")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var paths []string
		seen := map[string]bool{}
		for _, p := range []string{a, b, c} {
			// What the walk keeps: Markdown names, folders and files not left out by name, and
			// only names a slug can carry.
			ok := p != "" && !seen[p] && isMarkdownName(p[strings.LastIndexByte(p, '/')+1:])
			for _, seg := range strings.Split(p, "/") {
				ok = ok && seg != "" && slugName(seg) && !excluder{}.excluded(seg, seg)
			}
			if ok {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		slugs := assignSlugs(paths)
		owner := map[string]string{}
		for p, s := range slugs {
			if other, dup := owner[s]; dup {
				t.Fatalf("%q and %q share the slug %q", p, other, s)
			}
			owner[s] = p
			if len(s) > maxSlugBytes {
				continue // left out by the index
			}
			if clean, ok := cleanSlug(s); !ok || clean != s {
				t.Fatalf("the slug %q of %q does not resolve (clean %q, %v)", s, p, clean, ok)
			}
		}
	})
}

// FuzzExclude compiles arbitrary exclude patterns and matches them against arbitrary paths: no
// panic, and each match answers within a second.
func FuzzExclude(f *testing.F) {
	f.Add("archive/**", "archive/2020/old.md")
	f.Add("*.tmp.md", "notes.tmp.md")
	f.Add("**/private/**", "a/private/b.md")
	f.Add(strings.Repeat("**/", 20)+"x", strings.Repeat("a/", 31)+"b.md")
	f.Add("[a-", "a")
	f.Add("./api/generated/*.md", "api/generated/x.md")
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		ex, err := newExcluder(strings.Split(pattern, "\n"))
		if err != nil {
			return
		}
		start := time.Now()
		ex.excluded(rel, rel[strings.LastIndexByte(rel, '/')+1:])
		if took := time.Since(start); took > time.Second {
			t.Fatalf("matching took %v", took)
		}
	})
}
