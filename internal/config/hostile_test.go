package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadFile loads a project whose runlens.json holds content, timing the load.
func loadFile(t *testing.T, content string) (Errors, time.Duration) {
	t.Helper()
	root := project(t, content)
	start := time.Now()
	_, err := testLoader(t).Load(root, nil, Overrides{})
	took := time.Since(start)
	var errs Errors
	if err != nil && !errors.As(err, &errs) {
		t.Fatalf("Load: %v", err)
	}
	return errs, took
}

// Deep nesting is refused before anything walks it: a file of 200 KB of nesting took most of
// a minute (every level copied its parent's JSON pointer) before the server could answer.
func TestDeepNestingIsRefusedQuicklyNamingTheLimit(t *testing.T) {
	tests := []struct{ name, content string }{
		{"objects", strings.Repeat(`{"a":`, 40_000) + "1" + strings.Repeat("}", 40_000)},
		{"arrays", strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000)},
		{"unclosed arrays", strings.Repeat("[", 200_000)},
		{"inside a known key", `{"docs": {"exclude": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, took := loadFile(t, tt.content)
			if took > 2*time.Second {
				t.Errorf("load took %v", took)
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Problem, fmt.Sprint(maxNesting)) || errs[0].Line != 1 {
				t.Fatalf("errors = %v, want one naming the limit of %d levels at line 1", errs, maxNesting)
			}
		})
	}
	// Brackets inside strings are text, not nesting.
	errs, _ := loadFile(t, `{"docs": {"exclude": ["`+strings.Repeat("[{", 100)+`"]}}`)
	if len(errs) != 0 {
		t.Fatalf("brackets inside a string were counted as nesting: %v", errs)
	}
	// The deepest nesting the limit allows loads on to the schema's verdict.
	at := strings.Repeat("[", maxNesting-2) + strings.Repeat("]", maxNesting-2)
	errs, _ = loadFile(t, `{"docs": {"exclude": `+at+`}}`)
	if len(errs) == 0 || strings.Contains(errs[0].Problem, "nest") {
		t.Fatalf("nesting at the limit = %v, want the schema's own problem", errs)
	}
}

func TestAFileOverTheSizeLimitIsRefusedNamingIt(t *testing.T) {
	errs, _ := loadFile(t, `{"docs": {"root": "docs"}, "x": "`+strings.Repeat("a", maxFileBytes)+`"}`)
	if len(errs) != 1 || !strings.Contains(errs[0].Problem, "1 MiB") {
		t.Fatalf("errors = %v, want one naming the 1 MiB limit", errs)
	}
	if err := testLoader(t).Check("runlens.json", []byte(`{"x": "`+strings.Repeat("a", maxFileBytes)+`"}`)); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("Check = %v, want the 1 MiB limit", err)
	}
}

// Every problem is located in time linear in the file, however many there are and however
// long the line they sit on: eight times the file takes well under sixty-four times as long
// (what quadratic location took), measured against the same machine's eighth.
func TestManyProblemsOnOneLongLineAreLocatedQuickly(t *testing.T) {
	file := func(size int) string {
		var b strings.Builder
		b.WriteString(`{"docs": {"root": "docs"`)
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, `, "k%d": 1, "k%d": 2`, i, i)
		}
		b.WriteString("}}")
		return b.String()
	}
	_, small := loadFile(t, file(112_500))
	errs, took := loadFile(t, file(900_000))
	if limit := max(24*small, 500*time.Millisecond); took > limit {
		t.Errorf("load took %v, %v for an eighth of the file: want at most %v (linear)", took, small, limit)
	}
	if len(errs) != maxErrors || errs[0].Line != 1 || errs[0].Column < 2 {
		t.Fatalf("got %d problems (first %v), want %d located ones", len(errs), errs[0], maxErrors)
	}
}

// An unknown key as long as the file is reported shortened, and found quickly.
func TestAnOverlongUnknownKeyIsReportedShortened(t *testing.T) {
	key := strings.Repeat("é", 300_000)
	errs, took := loadFile(t, `{"`+key+`": {"a": 1, "b": 2, "c": 3}}`)
	if took > 2*time.Second {
		t.Errorf("load took %v", took)
	}
	if len(errs) != 1 || len(errs[0].Problem) > 200 || len(errs[0].Fix) > 2048 {
		t.Fatalf("errors = %.300v, want one short problem", errs)
	}
}

func TestNestingCheckCountsOnlyStructure(t *testing.T) {
	for _, tt := range []struct {
		in   string
		deep bool
	}{
		{`"[[[["`, false},
		{`["\"", [[1]]]`, false},
		{`["\\", [[1]]]`, false},
		{strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting), false},
		{strings.Repeat("[", maxNesting+1), true},
		{strings.Repeat(`{"a":`, maxNesting+1), true},
	} {
		_, err := parseDocument([]byte(tt.in))
		var se *syntaxError
		deep := errors.As(err, &se) && strings.Contains(se.msg, "nest")
		if deep != tt.deep {
			t.Errorf("parseDocument(%.40q) = %v, want too deep %v", tt.in, err, tt.deep)
		}
	}
}

// The docs root is served to the model: it must be a folder of the project, whatever the path
// or the symbolic links on the way say.
func TestADocsRootOutsideTheProjectIsRefused(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name, root string
		outside    bool
	}{
		{"a parent folder", "../outside", true},
		{"the file system root", "/", true},
		{"an absolute folder elsewhere", outside, true},
		{"a link to a folder elsewhere", "linked", true},
		{"a path through a link to a folder elsewhere", "linked/docs", true},
		{"a folder that climbs back in", "docs/../docs", false},
		{"a folder not created yet", "later/docs", false},
		{"the project itself", ".", false},
		{"a link to a folder inside", "inner-link", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, `{"docs": {"root": `+strconv.Quote(tt.root)+`}}`)
			if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
				t.Skipf("symbolic links unavailable: %v", err)
			}
			if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("docs", filepath.Join(root, "inner-link")); err != nil {
				t.Fatal(err)
			}
			cfg, err := testLoader(t).Load(root, nil, Overrides{})
			var errs Errors
			errors.As(err, &errs)
			if !tt.outside {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if !strings.HasPrefix(cfg.Docs.Root, root) {
					t.Fatalf("docs root = %s, want under %s", cfg.Docs.Root, root)
				}
				return
			}
			if len(errs) != 1 || errs[0].Pointer != "/docs/root" || !strings.Contains(errs[0].Problem, "outside the project") || errs[0].Line != 1 {
				t.Fatalf("errors = %v, want one at /docs/root saying it is outside the project", errs)
			}
		})
	}
}
