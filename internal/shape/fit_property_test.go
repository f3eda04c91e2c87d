package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"pgregory.net/rapid"
)

// The property test generates answers shaped like the paged telemetry answers (testdata schema:
// a paged collection with nested detail, logs, a deep tree, page and scan) with long strings,
// many items, deep nesting and multi-byte text, and checks every promise Fit makes.

var answerSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	f, err := os.Open("testdata/answer.schema.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://runlens.dev/schemas/testdata/answer.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

func validate(t *rapid.T, raw []byte) {
	sch, err := answerSchema()
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("answer breaks its schema: %v\n%.2000s", err, raw)
	}
}

// text draws strings from empty-ish to hundreds of kilobytes, ASCII prose, single words and
// multi-byte runs; nonEmpty guarantees minLength 1.
func text(nonEmpty bool) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		unit := rapid.OneOf(
			rapid.SampledFrom([]string{"word ", "a", "identifier_", "path/to/x", "日本語", "😀👍🏽", "e\u0301", "\"<&>\"\n", "👩\u200d💻"}),
			multilingual(),
		).Draw(t, "unit")
		// Mostly short, sometimes long, rarely hundreds of kilobytes.
		var repeat int
		switch size := rapid.IntRange(0, 19).Draw(t, "size"); {
		case size == 0:
			repeat = rapid.IntRange(300, 1500).Draw(t, "huge")
		case size < 5:
			repeat = rapid.IntRange(5, 200).Draw(t, "long")
		default:
			repeat = rapid.IntRange(0, 4).Draw(t, "short")
		}
		s := strings.Repeat(unit, repeat)
		if nonEmpty && s == "" {
			s = "x"
		}
		return s
	})
}

func hex(t *rapid.T, n int, label string) string {
	return fmt.Sprintf("%0*x", n, rapid.Uint64().Draw(t, label))[:n]
}

// nest draws a chain of depth+1 nested objects sharing one label, the innermost holding up to
// ten thousand numbers.
func nest(t *rapid.T, depth int, name string) map[string]any {
	label := text(true).Draw(t, name+" label")
	n := rapid.OneOf(rapid.IntRange(0, 5), rapid.IntRange(1000, 10000)).Draw(t, name+" items")
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	m := map[string]any{"label": label, "items": items}
	for range depth {
		m = map[string]any{"label": label, "child": m}
	}
	return m
}

func genAnswer(t *rapid.T) map[string]any {
	many := rapid.Bool().Draw(t, "many items")
	n := rapid.IntRange(0, 60).Draw(t, "runs")
	if many {
		n = rapid.IntRange(1000, 4000).Draw(t, "many runs")
	}
	name, service := rapid.StringN(1, 40, -1).Draw(t, "name"), rapid.StringN(1, 40, -1).Draw(t, "service")
	runs := make([]any, n)
	for i := range runs {
		r := map[string]any{
			"id": fmt.Sprintf("run-%d", i), "traceId": fmt.Sprintf("%032x", i),
			"status": []string{"ok", "error", "unset"}[i%3],
		}
		if many {
			r["name"], r["service"] = name, service
		} else {
			r["name"], r["service"] = text(true).Draw(t, "name"), text(true).Draw(t, "service")
			r["durationMs"] = rapid.Float64Range(0, 1e6).Draw(t, "duration")
			if rapid.Bool().Draw(t, "has tags") {
				r["tags"] = rapid.SliceOfN(text(true), 0, 5).Draw(t, "tags")
			}
			if rapid.Bool().Draw(t, "has attributes") {
				r["attributes"] = map[string]any{"http.url": text(false).Draw(t, "url"), "db.statement": text(false).Draw(t, "stmt")}
			}
			if rapid.Bool().Draw(t, "has detail") {
				r["detail"] = nest(t, rapid.IntRange(0, 300).Draw(t, "detail depth"), "detail")
			}
		}
		runs[i] = r
	}
	logs := make([]any, rapid.IntRange(0, 30).Draw(t, "logs"))
	for i := range logs {
		logs[i] = map[string]any{"severity": "ERROR", "message": text(true).Draw(t, "message"), "spanId": hex(t, 16, "span")}
	}
	page := map[string]any{"returned": n, "total": n + rapid.IntRange(0, 50).Draw(t, "more"), "truncated": false}
	if rapid.Bool().Draw(t, "has cursor") {
		page["nextCursor"] = "cursor-of-the-flow"
	}
	a := map[string]any{
		"count": n, "summary": text(true).Draw(t, "summary"), "status": "fail", "runs": runs, "logs": logs, "page": page,
		"scan": map[string]any{"windowStartUnixMs": 1, "windowEndUnixMs": 2, "scanned": 3, "limited": rapid.Bool().Draw(t, "limited")},
	}
	if rapid.Bool().Draw(t, "has output") {
		a["outputTail"] = text(false).Draw(t, "output")
	}
	if rapid.Bool().Draw(t, "has tree") {
		a["tree"] = nest(t, rapid.IntRange(0, 20).Draw(t, "tree depth"), "tree")
	}
	return a
}

func TestFitProperties(t *testing.T) {
	largest := map[int]int{}
	rapid.Check(t, func(t *rapid.T) {
		in := genAnswer(t)
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		budget := rapid.SampledFrom([]int{SummaryBudget, StandardBudget, LargeStandardBudget}).Draw(t, "budget")
		d := Standard
		if budget == SummaryBudget {
			d = Summary
		}
		paging := &Paging{Field: "runs", Count: "count", Remint: remintAt}
		out, changed, err := Fit(raw, d, Limits{Budget: budget, TailKeys: []string{"outputTail"}}, paging)
		if err != nil {
			t.Fatalf("Fit: %v", err)
		}
		if len(out) > budget {
			t.Fatalf("answer is %d bytes, budget %d", len(out), budget)
		}
		largest[budget] = max(largest[budget], len(out))
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("answer is not valid UTF-8 JSON: %.500s", out)
		}
		validate(t, out)

		var before, after map[string]any
		_ = json.Unmarshal(raw, &before)
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		runs, _ := after["runs"].([]any)
		page := after["page"].(map[string]any)
		if page["returned"] != float64(len(runs)) || after["count"] != float64(len(runs)) {
			t.Fatalf("page.returned %v and count %v with %d runs", page["returned"], after["count"], len(runs))
		}
		if page["total"] != before["page"].(map[string]any)["total"] || !reflect.DeepEqual(after["scan"], before["scan"]) {
			t.Fatalf("page.total or scan changed: %v %v", page, after["scan"])
		}
		dropped := len(runs) < len(before["runs"].([]any))
		switch cur, has := page["nextCursor"]; {
		case dropped && cur != fmt.Sprintf("cursor-after-%d", len(runs)):
			t.Fatalf("nextCursor = %v after dropping runs down to %d", cur, len(runs))
		case !dropped && cur != before["page"].(map[string]any)["nextCursor"] && (has || before["page"].(map[string]any)["nextCursor"] != nil):
			t.Fatalf("nextCursor changed to %v though no run was dropped", cur)
		}
		removed := compareReduced(t, before, after, "")
		if page["truncated"] != removed || changed != removed {
			t.Fatalf("page.truncated = %v, changed = %v, but something removed = %v", page["truncated"], changed, removed)
		}
	})
	t.Logf("largest answers by budget: %v", largest)
}

// compareReduced checks that after is before with items dropped from the ends of arrays and
// strings shortened into marked prefixes (or marked suffixes for outputTail), identifiers and
// page/scan untouched, and reports whether anything was removed.
func compareReduced(t *rapid.T, before, after any, key string) bool {
	switch b := before.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok || len(a) != len(b) {
			t.Fatalf("at %q the object's members changed: %v", key, after)
		}
		removed := false
		for k, bv := range b {
			av, ok := a[k]
			if !ok {
				t.Fatalf("member %q disappeared", k)
			}
			if k == "page" || k == "count" {
				continue
			}
			if protectedSubtree(k) && !reflect.DeepEqual(av, bv) {
				t.Fatalf("protected %q changed", k)
			}
			removed = compareReduced(t, bv, av, k) || removed
		}
		return removed
	case []any:
		a, ok := after.([]any)
		if !ok || len(a) > len(b) {
			t.Fatalf("at %q the array grew or changed type", key)
		}
		removed := len(a) < len(b)
		for i := range a {
			removed = compareReduced(t, b[i], a[i], key) || removed
		}
		return removed
	case string:
		a, ok := after.(string)
		switch {
		case !ok:
			t.Fatalf("at %q a string became %v", key, after)
		case a == b:
			return false
		case protectedKey(key):
			t.Fatalf("protected %q was shortened to %q", key, a)
		case key == "outputTail":
			if !strings.HasPrefix(a, Ellipsis) || !strings.HasSuffix(b, strings.TrimPrefix(a, Ellipsis)) {
				t.Fatalf("outputTail is not a marked suffix: %.80q", a)
			}
		case !strings.HasSuffix(a, Ellipsis) || !strings.HasPrefix(b, strings.TrimSuffix(a, Ellipsis)):
			t.Fatalf("at %q %.80q is not a marked prefix of %.80q", key, a, b)
		}
		if len(a) >= len(b) || utf8.RuneCountInString(a) < 2 {
			t.Fatalf("at %q the shortened string %q is not shorter or lost its first character", key, a)
		}
		return true
	default:
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("at %q %v became %v", key, before, after)
		}
		return false
	}
}
