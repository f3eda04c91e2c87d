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
// segments (including none). Memoised, so the work is bounded by the product of the two lengths
// however many "**" the pattern holds.
func matchSegments(pattern, segs []string) bool {
	memo := make(map[[2]int]bool)
	var m func(pi, si int) bool
	m = func(pi, si int) bool {
		key := [2]int{pi, si}
		if v, ok := memo[key]; ok {
			return v
		}
		var res bool
		switch {
		case pi == len(pattern):
			res = si == len(segs)
		case pattern[pi] == "**":
			res = m(pi+1, si) || si < len(segs) && m(pi, si+1)
		case si == len(segs):
			res = false
		default:
			ok, _ := path.Match(pattern[pi], segs[si])
			res = ok && m(pi+1, si+1)
		}
		memo[key] = res
		return res
	}
	return m(0, 0)
}
