package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runlens/runlens/gen"
)

// Canary secrets planted in every string of the adversarial answers: none may reach a client.
var canaries = []string{
	"ghp_" + strings.Repeat("A1b2C3d4", 5),
	"AKIAIOSFODNN7EXAMPLE",
	"xoxb-123456789012-1234567890123-" + strings.Repeat("aB3", 8),
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"Bearer abcdefghijklmnopqrstuvwxyz0123456789",
	"postgres://admin:hunter2hunter2@db.internal:5432/app",
}

// maximal builds the largest instance a schema allows: every property present, every array at
// maxItems, every string at maxLength filled with multi-byte text and a canary secret. It is the
// adversary of the byte budgets: an answer no real flow would produce, that every bound must
// still tame.
func maximal(schema map[string]any, depth int) any { return maximalIn(schema, depth, 0) }

// maximalIn is maximal for a node inside arrays nested arrays deep.
func maximalIn(schema map[string]any, depth, arrays int) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[len(enum)-1]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	switch schema["type"] {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			out[k] = maximalIn(v.(map[string]any), depth+1, arrays)
		}
		if ap, ok := schema["additionalProperties"].(map[string]any); ok {
			// Maps (span attributes) get 8 entries, not their 128-entry ceiling: no flow sends
			// attribute maps below detail=full, and 200 spans × 128 × 4 KiB would only test the
			// machine's patience.
			n := min(intOf(schema["maxProperties"], 8), 8)
			for i := range n {
				out[fmt.Sprintf("key.%d", i)] = maximalIn(ap, depth+1, arrays)
			}
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		// 50 items of a few KiB each already overflow every budget many times over; the
		// schemas' full 200 × 32 KiB would only slow the race detector down.
		n := min(intOf(schema["maxItems"], 4), 50)
		if arrays > 0 && items["type"] == "object" {
			// Objects in an array in an array (span events, each with an attribute map):
			// two per outer item; 50 spans × 32 events × 8 × 4 KiB would only test patience.
			n = min(n, 2)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = maximalIn(items, depth+1, arrays+1)
		}
		return out
	case "string":
		if _, ok := schema["pattern"]; ok {
			return "15m"
		}
		n := intOf(schema["maxLength"], 64)
		if depth > 1 {
			n = min(n, 4096) // nested text; top-level text (outputTail, content) stays at its bound
		}
		return fill(n)
	case "integer":
		if m, ok := schema["maximum"].(float64); ok && m < 1e12 {
			return int64(m)
		}
		return int64(1_700_000_000_000)
	case "number":
		if m, ok := schema["maximum"].(float64); ok {
			return m
		}
		return 123456.789
	case "boolean":
		return true
	}
	return nil
}

// fill returns at most n bytes of mixed text: ASCII, CJK, emoji and a canary secret.
func fill(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		part := canaries[i%len(canaries)] + " 日本語テキスト 🚀 e\u0301 "
		b.WriteString(part)
	}
	s := b.String()
	for len(s) > n {
		r := []rune(s)
		s = string(r[:len(r)-1])
	}
	return s
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return def
}

// adversary implements gen.Flows by answering every tool with its maximal output.
type adversary struct{ answers map[string][]byte }

func newAdversary() (*adversary, error) {
	a := &adversary{answers: map[string][]byte{}}
	for _, t := range gen.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.OutputSchema, &schema); err != nil {
			return nil, err
		}
		doc := maximal(schema, 0).(map[string]any)
		honestPage(doc)
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		a.answers[t.Name] = raw
	}
	return a, nil
}

func answer[T any](a *adversary, name string) (T, error) {
	var out T
	err := json.Unmarshal(a.answers[name], &out)
	return out, err
}

func (a *adversary) GetAppStatus(context.Context, gen.GetAppStatusInput) (gen.GetAppStatusOutput, error) {
	return answer[gen.GetAppStatusOutput](a, gen.ToolGetAppStatus)
}
func (a *adversary) ListRuns(context.Context, gen.ListRunsInput) (gen.ListRunsOutput, error) {
	return answer[gen.ListRunsOutput](a, gen.ToolListRuns)
}
func (a *adversary) GetRun(context.Context, gen.GetRunInput) (gen.GetRunOutput, error) {
	return answer[gen.GetRunOutput](a, gen.ToolGetRun)
}
func (a *adversary) GetRecentErrors(context.Context, gen.GetRecentErrorsInput) (gen.GetRecentErrorsOutput, error) {
	return answer[gen.GetRecentErrorsOutput](a, gen.ToolGetRecentErrors)
}
func (a *adversary) GetLastJobResult(context.Context, gen.GetLastJobResultInput) (gen.GetLastJobResultOutput, error) {
	return answer[gen.GetLastJobResultOutput](a, gen.ToolGetLastJobResult)
}
func (a *adversary) AnalyzeServicePerformance(context.Context, gen.AnalyzeServicePerformanceInput) (gen.AnalyzeServicePerformanceOutput, error) {
	return answer[gen.AnalyzeServicePerformanceOutput](a, gen.ToolAnalyzeServicePerformance)
}
func (a *adversary) AnalyzeDBBottlenecks(context.Context, gen.AnalyzeDBBottlenecksInput) (gen.AnalyzeDBBottlenecksOutput, error) {
	return answer[gen.AnalyzeDBBottlenecksOutput](a, gen.ToolAnalyzeDBBottlenecks)
}
func (a *adversary) Doctor(context.Context, gen.DoctorInput) (gen.DoctorOutput, error) {
	return answer[gen.DoctorOutput](a, gen.ToolDoctor)
}
func (a *adversary) SearchDocs(context.Context, gen.SearchDocsInput) (gen.SearchDocsOutput, error) {
	return answer[gen.SearchDocsOutput](a, gen.ToolSearchDocs)
}
func (a *adversary) ListDocs(context.Context, gen.ListDocsInput) (gen.ListDocsOutput, error) {
	return answer[gen.ListDocsOutput](a, gen.ToolListDocs)
}
func (a *adversary) GetDoc(context.Context, gen.GetDocInput) (gen.GetDocOutput, error) {
	return answer[gen.GetDocOutput](a, gen.ToolGetDoc)
}
func (a *adversary) ListCommands(context.Context, gen.ListCommandsInput) (gen.ListCommandsOutput, error) {
	return answer[gen.ListCommandsOutput](a, gen.ToolListCommands)
}
func (a *adversary) ExecuteCommand(context.Context, gen.ExecuteCommandInput) (gen.ExecuteCommandOutput, error) {
	return answer[gen.ExecuteCommandOutput](a, gen.ToolExecuteCommand)
}

// honestPage makes the adversary's page agree with its one collection, as a real flow's does.
func honestPage(doc map[string]any) {
	page, ok := doc["page"].(map[string]any)
	if !ok {
		return
	}
	var n, arrays int
	for _, v := range doc {
		if a, ok := v.([]any); ok {
			n, arrays = len(a), arrays+1
		}
	}
	if arrays == 1 {
		page["returned"] = int64(n)
		page["total"] = int64(n)
		delete(page, "nextCursor")
	}
	if _, ok := doc["count"]; ok && arrays == 1 {
		doc["count"] = int64(n)
	}
}
