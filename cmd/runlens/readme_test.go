package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

func TestEveryFileTheReadmeLinksToExists(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(data), -1)
	checked := 0
	for _, m := range links {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(target))); err != nil {
			t.Errorf("README.md links to %s, which does not exist", target)
		}
	}
	if checked == 0 {
		t.Fatal("README.md links to no file of the project; the links this test checks are gone")
	}
}

func TestEveryFileTheProjectDocsLinkToExists(t *testing.T) {
	for _, doc := range []string{"BENCHMARKS.md", "docs/conventions.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", filepath.Dir(doc), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
			}
		}
	}
}
