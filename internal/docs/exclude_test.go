package docs

import "testing"

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
