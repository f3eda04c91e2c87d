package shape

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// runsAnswer builds a list answer with n runs whose names are nameLen bytes long.
func runsAnswer(n, nameLen int, withCursor bool) []byte {
	runs := make([]map[string]any, n)
	for i := range runs {
		runs[i] = map[string]any{"id": fmt.Sprintf("run-%05d", i), "name": strings.Repeat("n", nameLen), "status": "ok"}
	}
	page := map[string]any{"returned": n, "total": n * 2, "truncated": false}
	if withCursor {
		page["nextCursor"] = "old-cursor"
	}
	raw, _ := json.Marshal(map[string]any{"count": n, "runs": runs, "page": page})
	return raw
}

// decode unmarshals an answer for assertions, failing the test on invalid JSON.
func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, raw)
	}
	return m
}

func remintAt(returned int) (string, error) { return fmt.Sprintf("cursor-after-%d", returned), nil }

func TestFitLeavesAnswersWithinBudgetAlone(t *testing.T) {
	raw := runsAnswer(3, 10, true)
	out, changed, err := Fit(raw, Standard, Limits{}, &Paging{Field: "runs", Remint: remintAt})
	if err != nil || changed || string(out) != string(raw) {
		t.Errorf("Fit = %s, %v, %v; want the input unchanged", out, changed, err)
	}
}

func TestFitFullOnlyChecksTheCeiling(t *testing.T) {
	raw := runsAnswer(2000, 100, false)
	out, changed, err := Fit(raw, Full, Limits{Budget: 1024}, nil)
	if err != nil || changed || len(out) != len(raw) {
		t.Fatalf("Fit(full) = %d bytes, %v, %v; want the input unchanged", len(out), changed, err)
	}
	_, _, err = Fit(raw, Full, Limits{FullCeiling: 64 << 10}, nil)
	var tl *TooLargeError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &tl) {
		t.Fatalf("Fit(full) above the ceiling error = %v, want a TooLargeError", err)
	}
	if tl.Size != len(raw) || tl.Limit != 64<<10 || !strings.Contains(tl.Hint(), "detail=standard") {
		t.Errorf("TooLargeError = %+v, hint %q", tl, tl.Hint())
	}
}

func TestFitDropsItemsAndKeepsThePageHonest(t *testing.T) {
	tests := []struct {
		name       string
		paging     *Paging
		withCursor bool
		wantCursor any // nil: no nextCursor
	}{
		{name: "a re-minted cursor points right after the kept items", paging: &Paging{Field: "runs", Count: "count", Remint: remintAt}, withCursor: true, wantCursor: "re-minted"},
		{name: "a last page gains a cursor to the dropped items", paging: &Paging{Field: "runs", Count: "count", Remint: remintAt}, wantCursor: "re-minted"},
		{name: "without Remint the stale cursor is removed", paging: &Paging{Field: "runs", Count: "count"}, withCursor: true},
		{name: "the described collection is inferred when it is the only one", withCursor: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := runsAnswer(1000, 40, tt.withCursor)
			out, changed, err := Fit(raw, Standard, Limits{}, tt.paging)
			if err != nil || !changed {
				t.Fatalf("Fit: changed %v, err %v", changed, err)
			}
			if len(out) > StandardBudget {
				t.Fatalf("answer is %d bytes, over the budget", len(out))
			}
			m := decode(t, out)
			runs := m["runs"].([]any)
			page := m["page"].(map[string]any)
			if page["returned"] != float64(len(runs)) || page["truncated"] != true || page["total"] != float64(2000) {
				t.Errorf("page = %v with %d runs", page, len(runs))
			}
			if tt.paging != nil && m["count"] != float64(len(runs)) {
				t.Errorf("count = %v with %d runs", m["count"], len(runs))
			}
			cur, has := page["nextCursor"]
			switch {
			case tt.wantCursor == nil && has:
				t.Errorf("nextCursor = %v, want none", cur)
			case tt.wantCursor != nil && cur != fmt.Sprintf("cursor-after-%d", len(runs)):
				t.Errorf("nextCursor = %v, want the cursor after %d items", cur, len(runs))
			}
			if first := runs[0].(map[string]any); first["id"] != "run-00000" || first["name"] != strings.Repeat("n", 40) {
				t.Errorf("the first run changed: %v", first)
			}
		})
	}
}

func TestFitDropsFromTheLargestCollectionFirst(t *testing.T) {
	small := []string{"a", "b", "c"}
	big := make([]string, 800)
	for i := range big {
		big[i] = fmt.Sprintf("item %03d with some words", i)
	}
	raw, _ := json.Marshal(map[string]any{"small": small, "big": big, "page": map[string]any{"returned": 800, "truncated": false}})
	out, _, err := Fit(raw, Summary, Limits{}, &Paging{Field: "big"})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	if got := len(m["small"].([]any)); got != 3 {
		t.Errorf("the small collection lost items: %d left", got)
	}
	if got := len(m["big"].([]any)); got == 0 || got == 800 || len(out) > SummaryBudget {
		t.Errorf("big kept %d items in %d bytes", got, len(out))
	}
}

func TestFitCountsOmittedItems(t *testing.T) {
	spans := make([]map[string]any, 300)
	for i := range spans {
		spans[i] = map[string]any{"spanId": fmt.Sprintf("%016x", i), "name": strings.Repeat("s", 120), "status": "ok"}
	}
	raw, _ := json.Marshal(map[string]any{"id": "run-1", "spans": spans, "omittedSpans": 7, "page": map[string]any{"returned": 300, "truncated": false}})
	out, _, err := Fit(raw, Standard, Limits{Budget: 32 << 10}, &Paging{Field: "spans", Omitted: "omittedSpans"})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	kept := len(m["spans"].([]any))
	if m["omittedSpans"] != float64(7+300-kept) {
		t.Errorf("omittedSpans = %v with %d of 300 spans kept, want %d", m["omittedSpans"], kept, 7+300-kept)
	}
}

func TestFitNeverCreatesAPageButFlagsTruncation(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"exitCode": 0, "outputTail": strings.Repeat("old line\n", 5000) + "the newest line", "truncated": false})
	out, changed, err := Fit(raw, Standard, Limits{Budget: 32 << 10, TailKeys: []string{"outputTail"}}, nil)
	if err != nil || !changed {
		t.Fatalf("Fit: %v, %v", changed, err)
	}
	m := decode(t, out)
	if _, ok := m["page"]; ok {
		t.Error("Fit created a page object")
	}
	tail := m["outputTail"].(string)
	if m["truncated"] != true || !strings.HasPrefix(tail, Ellipsis) || !strings.HasSuffix(tail, "the newest line") {
		t.Errorf("truncated = %v, outputTail starts %q and ends %q", m["truncated"], tail[:12], tail[len(tail)-20:])
	}
}

func TestFitShortensLongStringsSafely(t *testing.T) {
	long := strings.Repeat("日本語のテキスト😀e\u0301 ", 20000)
	raw, _ := json.Marshal(map[string]any{
		"id": "run-1", "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "status": "fail",
		"summary": long, "errorMessage": long[:30000],
		"name": "a_long_identifier_without_any_spaces_in_it",
		"page": map[string]any{"returned": 0, "truncated": false},
	})
	out, changed, err := Fit(raw, Standard, Limits{Budget: 32 << 10}, nil)
	if err != nil || !changed || len(out) > 32<<10 {
		t.Fatalf("Fit = %d bytes, %v, %v", len(out), changed, err)
	}
	m := decode(t, out)
	for _, k := range []string{"summary", "errorMessage"} {
		s := m[k].(string)
		if !utf8.ValidString(s) || !strings.HasSuffix(s, Ellipsis) || !strings.HasPrefix(long, strings.TrimSuffix(s, Ellipsis)) {
			t.Errorf("%s was not cut into a marked prefix: ends %q", k, s[len(s)-12:])
		}
	}
	if m["id"] != "run-1" || m["traceId"] != "4bf92f3577b34da6a3ce929d0e0e4736" || m["status"] != "fail" {
		t.Errorf("protected members changed: %v %v %v", m["id"], m["traceId"], m["status"])
	}
	if m["name"] != "a_long_identifier_without_any_spaces_in_it" {
		t.Errorf("a single word was shortened while prose could give way: %v", m["name"])
	}
	if m["page"].(map[string]any)["truncated"] != true {
		t.Error("page.truncated is not set after shortening")
	}
}

func TestFitKeepsNamedMembers(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"schemaRef": strings.Repeat("tools/x ", 250), "text": strings.Repeat("words ", 1000)})
	out, _, err := Fit(raw, Summary, Limits{Keep: []string{"schemaRef"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := decode(t, out); m["schemaRef"] != strings.Repeat("tools/x ", 250) {
		t.Error("a member named in Limits.Keep was shortened")
	}
}

func TestFitAdversarialAnswers(t *testing.T) {
	deep := func(levels int) any {
		var v any = map[string]any{"label": "leaf"}
		for range levels {
			v = map[string]any{"label": "level", "child": v}
		}
		return v
	}
	tiny := make([]int, 10000)
	tinyItems := make([]map[string]any, 10000)
	for i := range tinyItems {
		tinyItems[i] = map[string]any{"id": fmt.Sprint(i)}
	}
	manyLists := map[string]any{}
	for i := range 1200 {
		manyLists[fmt.Sprintf("k%04d", i)] = []int{i, i + 1, i + 2}
	}
	deepItems := make([]any, 50)
	for i := range deepItems {
		deepItems[i] = deep(300)
	}
	tests := []struct {
		name    string
		answer  map[string]any
		paging  *Paging
		tooBig  bool
		checkFn func(t *testing.T, m map[string]any)
	}{
		{
			name:   "a single enormous string is cut",
			answer: map[string]any{"content": strings.Repeat("x", 10<<20), "page": map[string]any{"returned": 0, "truncated": false}},
		},
		{
			name:   "ten thousand tiny items are dropped from the end",
			answer: map[string]any{"runs": tinyItems, "count": 10000, "page": map[string]any{"returned": 10000, "truncated": false}},
			paging: &Paging{Field: "runs", Count: "count", Remint: remintAt},
			checkFn: func(t *testing.T, m map[string]any) {
				runs := m["runs"].([]any)
				if last := runs[len(runs)-1].(map[string]any)["id"]; last != fmt.Sprint(len(runs)-1) {
					t.Errorf("items were not dropped from the end: last id %v of %d", last, len(runs))
				}
			},
		},
		{
			name:   "ten thousand tiny numbers nested below the top level are dropped last",
			answer: map[string]any{"tree": map[string]any{"label": "root", "items": tiny}},
		},
		{
			name:   "thousands of small lists inside an object lose their items",
			answer: map[string]any{"groups": manyLists},
		},
		{
			name:   "deeply nested items are dropped whole",
			answer: map[string]any{"runs": deepItems, "page": map[string]any{"returned": 50, "truncated": false}},
		},
		{
			name:   "a deep structure with nothing to drop or cut is refused",
			answer: map[string]any{"tree": deep(2000)},
			tooBig: true,
		},
		{
			name:   "huge identifiers are never cut, so the answer is refused",
			answer: map[string]any{"id": strings.Repeat("i", 20000)},
			tooBig: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.answer)
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := Fit(raw, Standard, Limits{}, tt.paging)
			if tt.tooBig {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Fit error = %v, want ErrTooLarge", err)
				}
				return
			}
			if err != nil || !changed || len(out) > StandardBudget {
				t.Fatalf("Fit = %d bytes, changed %v, err %v", len(out), changed, err)
			}
			m := decode(t, out)
			if page, ok := m["page"].(map[string]any); ok && page["truncated"] != true {
				t.Errorf("page = %v, want truncated", page)
			}
			if tt.checkFn != nil {
				tt.checkFn(t, m)
			}
		})
	}
}

func TestFitRejectsWhatIsNotAnObject(t *testing.T) {
	big := strings.Repeat("x", 20000)
	tests := []struct {
		name string
		raw  string
	}{
		{name: "an array", raw: `["` + big + `"]`},
		{name: "a string", raw: `"` + big + `"`},
		{name: "truncated JSON", raw: `{"a":"` + big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Fit([]byte(tt.raw), Standard, Limits{}, nil); err == nil || errors.Is(err, ErrTooLarge) {
				t.Errorf("Fit error = %v, want a malformed-answer error", err)
			}
		})
	}
}

func TestFitReportsRemintFailure(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := Fit(runsAnswer(1000, 40, true), Standard, Limits{}, &Paging{Field: "runs", Remint: func(int) (string, error) { return "", boom }})
	if !errors.Is(err, boom) {
		t.Errorf("Fit error = %v, want the Remint error wrapped", err)
	}
}

func TestFitUsesTheSummaryBudgetByDefault(t *testing.T) {
	out, _, err := Fit(runsAnswer(200, 40, false), Summary, Limits{}, nil)
	if err != nil || len(out) > SummaryBudget {
		t.Errorf("Fit(summary) = %d bytes, %v; want at most %d", len(out), err, SummaryBudget)
	}
}

func TestDiscloseRedactsBeforeFitting(t *testing.T) {
	token := "ghp_" + strings.Repeat("Ab1", 12)
	raw, _ := json.Marshal(map[string]any{"message": strings.Repeat("padding ", 3000) + token, "note": "password=x"})
	out, _, err := Disclose(raw, Standard, Limits{}, nil, NewRedactor(RedactorOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ghp_Ab1") || !strings.Contains(string(out), "password=[REDACTED]") || len(out) > StandardBudget {
		t.Errorf("Disclose = %d bytes: %s", len(out), out[len(out)-120:])
	}
}

func TestScanLimitedAndPageTruncatedAreIndependent(t *testing.T) {
	answer := func(runs int, limited bool) []byte {
		raw, _ := json.Marshal(map[string]any{
			"runs": strings.Split(strings.Repeat("run with a long enough name,", runs), ","),
			"page": map[string]any{"returned": runs + 1, "truncated": false},
			"scan": map[string]any{"windowStartUnixMs": 1, "windowEndUnixMs": 2, "scanned": 50000, "limited": limited},
		})
		return raw
	}
	tests := []struct {
		name          string
		raw           []byte
		wantTruncated bool
		wantLimited   bool
	}{
		{name: "a scan limit without output truncation", raw: answer(3, true), wantLimited: true},
		{name: "output truncation without a scan limit", raw: answer(2000, false), wantTruncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Fit(tt.raw, Standard, Limits{}, &Paging{Field: "runs"})
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, out)
			page, scan := m["page"].(map[string]any), m["scan"].(map[string]any)
			if page["truncated"] != tt.wantTruncated || scan["limited"] != tt.wantLimited {
				t.Errorf("page.truncated = %v, scan.limited = %v; want %v, %v", page["truncated"], scan["limited"], tt.wantTruncated, tt.wantLimited)
			}
		})
	}
}

func TestFitCutsALargeTextBeforeEmptyingASmallList(t *testing.T) {
	sections := make([]map[string]any, 30)
	for i := range sections {
		sections[i] = map[string]any{"slug": fmt.Sprintf("section-%d", i), "title": fmt.Sprintf("Section %d", i)}
	}
	raw, _ := json.Marshal(map[string]any{
		"slug": "guide", "content": strings.Repeat("A paragraph of the guide. ", 3000), "sections": sections,
		"page": map[string]any{"returned": 1, "truncated": false},
	})
	out, _, err := Fit(raw, Standard, Limits{Budget: 32 << 10}, &Paging{})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	if got := len(m["sections"].([]any)); got != 30 {
		t.Errorf("sections kept %d of 30 items though the content alone was over budget", got)
	}
	if c := m["content"].(string); !strings.HasSuffix(c, Ellipsis) || len(out) > 32<<10 {
		t.Errorf("content was not cut to the budget: %d bytes", len(out))
	}
}

func TestDiscloseRedactsAtEveryDetailLevel(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	var texts []string
	for _, c := range canaries {
		texts = append(texts, c.text)
	}
	raw, _ := json.Marshal(map[string]any{
		"summary": strings.Join(texts, " | "),
		"logs":    texts,
		"spans":   []any{map[string]any{"attributes": map[string]any{"http.request.header.authorization": "opaque-value-1", "url": texts[0]}}},
	})
	for _, d := range []Detail{Summary, Standard, Full} {
		out, _, err := Disclose(raw, d, Limits{}, nil, r)
		if err != nil {
			t.Fatalf("Disclose(%s): %v", d, err)
		}
		for _, c := range canaries {
			if strings.Contains(string(out), c.secret) {
				t.Errorf("detail=%s: the %s canary survived", d, c.name)
			}
		}
		if strings.Contains(string(out), "opaque-value-1") {
			t.Errorf("detail=%s: a sensitive attribute value survived", d)
		}
	}
}
