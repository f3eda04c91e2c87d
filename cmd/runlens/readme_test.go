package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
)

const (
	toolsBegin = "<!-- tools:begin -->"
	toolsEnd   = "<!-- tools:end -->"
)

// toolTable renders the README's tool table from the registry, so the README cannot drift from
// what tools/list serves.
func toolTable() string {
	var b strings.Builder
	b.WriteString("| tool | family | what it answers |\n|---|---|---|\n")
	for _, t := range gen.Tools {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.Name, t.Family, t.Description)
	}
	b.WriteString("\nCompact profile (`--profile compact`): ")
	var names []string
	for _, t := range gen.CompactTools {
		names = append(names, "`"+t.Name+"`")
	}
	b.WriteString(strings.Join(names, " and ") + " — the same operations behind one router, for a smaller tools/list.\n")
	return b.String()
}

func TestReadmeToolTableMatchesTheRegistry(t *testing.T) {
	const path = "../../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, toolsBegin), strings.Index(text, toolsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %s … %s markers", toolsBegin, toolsEnd)
	}
	want := text[:i+len(toolsBegin)] + "\n" + toolTable() + text[j:]
	if want == text {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("README.md's tool table is out of date with the registry: run UPDATE_GOLDEN=1 go test ./cmd/runlens")
}
