package docs

import (
	"strings"
	"testing"
	"time"
)

func TestExcluder(t *testing.T) {
	ex, err := newExcluder([]string{"archive/**", "*.tmp.md", "drafts", "./api/generated/*.md", "**/private/**"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel  string
		want bool
	}{
		{"_partial.md", true},
		{"guides/_draft.md", true},
		{".hidden", true},
		{"archive", true},
		{"archive/2020/old.md", true},
		{"guides/archive/x.md", false},
		{"notes.tmp.md", true},
		{"deep/notes.tmp.md", true},
		{"drafts", true},
		{"guides/drafts", true},
		{"api/generated/client.md", true},
		{"api/generated/sub/client.md", false},
		{"api/handwritten.md", false},
		{"private", true},
		{"a/private/b.md", true},
		{"private/b.md", true},
		{"guides/setup.md", false},
	}
	for _, tt := range tests {
		name := tt.rel
		if i := lastSlash(tt.rel); i >= 0 {
			name = tt.rel[i+1:]
		}
		if got := ex.excluded(tt.rel, name); got != tt.want {
			t.Errorf("excluded(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// A pattern of many "**" against a deep path is matched in time bounded by the product of their
// lengths: it tried every way of spreading the path over the stars.
func TestManyDoubleStarsMatchQuickly(t *testing.T) {
	ex, err := newExcluder([]string{strings.Repeat("**/", 20) + "x"})
	if err != nil {
		t.Fatal(err)
	}
	rel := strings.Repeat("a/", 31) + "b.md"
	start := time.Now()
	if ex.excluded(rel, "b.md") {
		t.Fatal("excluded a path that does not end in x")
	}
	if !ex.excluded(strings.Repeat("a/", 31)+"x", "x") {
		t.Fatal("kept a path that ends in x")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("matching took %v", took)
	}
}
