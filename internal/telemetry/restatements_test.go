package telemetry_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	// A restatement of a rule outside the engine (SQL, an incremental derivation) says so:
	// "restates docs/semantics.md R5" (or "R8, R12").
	restatesRe = regexp.MustCompile(`restates docs/semantics\.md (R\d+(?:, R\d+)*)`)
	// The test that holds a restatement to the engine says so in its package:
	// "differential test of docs/semantics.md R5".
	differentialRe = regexp.MustCompile(`differential test of docs/semantics\.md (R\d+(?:, R\d+)*)`)
	ruleHeadingRe  = regexp.MustCompile(`(?m)^## (R\d+) `)
)

// comments joins a Go file's comment lines, so a phrase broken across lines reads whole.
func comments(src string) string {
	return regexp.MustCompile(`\n\s*//\s*`).ReplaceAllString(src, " ")
}

func rulesIn(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.Split(m[1], ", ")...)
	}
	return out
}

// TestEveryRestatedRuleHasADifferentialTest holds the backends' copies of the rules to a test:
// a package below internal/telemetry whose code restates a rule of docs/semantics.md has a
// test that compares that copy with the engine, and the rule exists.
func TestEveryRestatedRuleHasADifferentialTest(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "semantics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, m := range ruleHeadingRe.FindAllStringSubmatch(string(doc), -1) {
		rules = append(rules, m[1])
	}
	restated := map[string][]string{} // package folder → rules its code restates
	tested := map[string][]string{}   // package folder → rules its tests hold
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text, dir := comments(string(raw)), filepath.Dir(path)
		if strings.HasSuffix(path, "_test.go") {
			tested[dir] = append(tested[dir], rulesIn(differentialRe, text)...)
			return nil
		}
		for _, r := range rulesIn(restatesRe, text) {
			if !slices.Contains(rules, r) {
				t.Errorf("%s restates %s, which docs/semantics.md does not define", path, r)
			}
			restated[dir] = append(restated[dir], r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The backends that restate rules today; a copy removed takes its line out of here.
	for _, dir := range []string{"clickhouse", "store"} {
		if len(restated[dir]) == 0 {
			t.Errorf("package %s tags no restatement; its SQL restates rules of docs/semantics.md", dir)
		}
	}
	for dir, rs := range restated {
		for _, r := range rs {
			if !slices.Contains(tested[dir], r) {
				t.Errorf("package %s restates docs/semantics.md %s with no differential test of it in the package "+
					"(a test whose comment says \"differential test of docs/semantics.md %s\")", dir, r, r)
			}
		}
	}
}

// TestBackendsTakeTheEnginesLimits holds the backends to the limits the engine hands them (Ask
// and each scan's Limit): no backend reads the engine's defaults for itself, so an engine with
// other limits is obeyed by its capabilities too.
func TestBackendsTakeTheEnginesLimits(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." || filepath.Dir(path) == "engine" {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), "telemetry.DefaultLimits") {
			t.Errorf("%s reads telemetry.DefaultLimits; a backend takes the engine's limits from telemetry.Ask or the scan's Limit", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
