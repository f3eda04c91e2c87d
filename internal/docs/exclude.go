package docs

import (
	"fmt"
	"path"
	"strings"
)

// excluder decides which files and folders of the docs root are not part of the corpus. Names
// starting with "_" or "." are always left out (drafts, partials, editor and VCS folders).
// Configured patterns use path.Match syntax on slash paths relative to the root, plus "**" for
// any number of folders; a pattern without a slash matches a name at any depth, as in .gitignore.
type excluder struct {
	anchored [][]string
	names    []string
}

func newExcluder(patterns []string) (excluder, error) {
	var e excluder
	for _, p := range patterns {
		p = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "./"), "/")
		p = strings.TrimSuffix(p, "/")
		if p == "" {
			continue
		}
		segs := strings.Split(p, "/")
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil {
				return excluder{}, fmt.Errorf("docs exclude pattern %q: %w", p, err)
			}
		}
		if len(segs) == 1 {
			e.names = append(e.names, p)
		} else {
			e.anchored = append(e.anchored, segs)
		}
	}
	return e, nil
}

// excluded reports whether the entry at slash path rel (whose last element is name) is left out.
// A folder that is left out is not walked at all.
func (e excluder) excluded(rel, name string) bool {
	if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
		return true
	}
	for _, p := range e.names {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	if len(e.anchored) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for _, p := range e.anchored {
		if matchSegments(p, segs) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments against pattern segments, "**" standing for any number of
// segments (including none).
func matchSegments(pattern, segs []string) bool {
	for len(pattern) > 0 {
		if pattern[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pattern[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pattern[0], segs[0]); !ok {
			return false
		}
		pattern, segs = pattern[1:], segs[1:]
	}
	return len(segs) == 0
}
