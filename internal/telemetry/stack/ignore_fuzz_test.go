package stack

import (
	"strings"
	"testing"
	"time"
)

// FuzzIgnore compiles arbitrary .gitignore text (and the same text as a snippet deny list) and
// applies it to arbitrary paths. It never panics; text the strict reading accepts the lenient
// one accepts with the same rules; and a path is judged within a second, however many "**" or
// "*" its patterns hold.
func FuzzIgnore(f *testing.F) {
	for _, s := range []struct{ text, path string }{
		{"*.log\n/build\ndist/\n!keep.log\n", "build/a.log"},
		{"**/cache/**\nsecret/\n!secret/ok.txt\n", "a/cache/b/c.go"},
		{`\#literal` + "\n" + `\!bang` + "\ntrailing\\ \n", "#literal"},
		{strings.Repeat("**/", 30) + "x", strings.Repeat("a/", 40) + "b"},
		{strings.Repeat("*a", 30) + "\n", strings.Repeat("a", 60) + "b"},
		{"[a-\n/\n!\n#\n", "a"},
		{"src/**/*.go\r\n", "src/x/y/z.go"},
	} {
		f.Add(s.text, s.path)
	}
	f.Fuzz(func(t *testing.T, text, rel string) {
		lenient, err := parseIgnore(text, false)
		if err != nil {
			t.Fatalf("the lenient reading failed: %v", err)
		}
		if strict, err := parseIgnore(text, true); err == nil && len(strict.rules) != len(lenient.rules) {
			t.Fatalf("strict reading kept %d rules, lenient %d", len(strict.rules), len(lenient.rules))
		}
		start := time.Now()
		lenient.ignored(rel)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("judging %q took %v", rel, took)
		}
	})
}
