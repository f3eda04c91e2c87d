package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// validInput returns the first valid example input of a tool, with detail set when the tool
// takes one.
func validInput(t *testing.T, tool string, detail string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "examples", tool, "valid-input-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	delete(in, "cursor")
	if detail != "" {
		in["detail"] = detail
	}
	out, _ := json.Marshal(in)
	return out
}

func takesDetail(t gen.Tool) bool {
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &s)
	_, ok := s.Properties["detail"]
	return ok
}

// TestEveryAnswerFitsItsBudgetAndLeaksNoSecret drives every tool through the one server path
// with the largest answer its output schema allows, full of canary secrets and multi-byte text,
// and checks what a client receives: within budget, valid against the published schema, honest
// page counts, no secret.
func TestEveryAnswerFitsItsBudgetAndLeaksNoSecret(t *testing.T) {
	adv, err := newAdversary()
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Flows: adv})
	v := oracle.NewValidator()
	for _, tool := range gen.Tools {
		details := []string{""}
		if takesDetail(tool) {
			details = []string{"summary", "standard", "full"}
		}
		for _, d := range details {
			name := tool.Name + "/" + d
			if d == "" {
				name = tool.Name + "/default"
			}
			t.Run(name, func(t *testing.T) {
				res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: tool.Name, Arguments: validInput(t, tool.Name, d)})
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if res.IsError {
					if d == "full" && strings.Contains(string(res.Structured), `"code":"output_too_large"`) {
						return // the deliberate level refuses rather than send an unbounded message
					}
					t.Fatalf("tool error: %s", res.Structured)
				}
				size := len(res.Structured)
				budget := tool.Budget.Standard
				switch d {
				case "summary":
					budget = tool.Budget.Summary
				case "full":
					budget = shape.DefaultFullCeiling
				}
				if size > budget {
					t.Fatalf("answer is %d bytes, budget %d", size, budget)
				}
				t.Logf("%d bytes (budget %d, adversarial input %d bytes)", size, budget, len(adv.answers[tool.Name]))
				for _, c := range canaries {
					if strings.Contains(string(res.Structured), c) {
						t.Fatalf("canary %q survived", c)
					}
				}
				if fields, err := v.Validate(tool.Name+".output", tool.OutputSchema, res.Structured); err != nil || len(fields) > 0 {
					t.Fatalf("answer fails its schema: %v %v", fields, err)
				}
				checkPage(t, res.Structured, len(adv.answers[tool.Name]) > budget && d != "full")
			})
		}
	}
}

// checkPage asserts page.returned equals the length of the collection it describes, and that
// truncated is set when the answer had to be cut.
func checkPage(t *testing.T, raw []byte, mustBeTruncated bool) {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pageRaw, ok := doc["page"]
	if !ok {
		return
	}
	var page struct {
		Returned  int  `json:"returned"`
		Truncated bool `json:"truncated"`
	}
	if err := json.Unmarshal(pageRaw, &page); err != nil {
		t.Fatal(err)
	}
	var arrays []string
	for k, v := range doc {
		if len(v) > 0 && v[0] == '[' {
			arrays = append(arrays, k)
		}
	}
	if len(arrays) == 1 {
		var items []json.RawMessage
		_ = json.Unmarshal(doc[arrays[0]], &items)
		if page.Returned != len(items) {
			t.Fatalf("page.returned = %d, %s has %d items", page.Returned, arrays[0], len(items))
		}
	}
	if mustBeTruncated && !page.Truncated {
		t.Fatal("the answer was cut to its budget but page.truncated is false")
	}
}

// stubFlows answers nothing; the tests below never reach a flow or use the ones they set.
type stubFlows struct {
	adversary
	getRun func() (gen.GetRunOutput, error)
}

func (s *stubFlows) GetRun(ctx context.Context, in gen.GetRunInput) (gen.GetRunOutput, error) {
	return s.getRun()
}

func TestErrorsAreSplitBetweenProtocolAndTool(t *testing.T) {
	flows := &stubFlows{}
	h := New(Options{Flows: flows})
	ctx := context.Background()

	t.Run("an unknown tool is a protocol error", func(t *testing.T) {
		_, err := h.CallTool(ctx, mcp.CallRequest{Name: "nope", Arguments: json.RawMessage(`{}`)})
		if !errors.Is(err, mcp.ErrUnknownTool) {
			t.Fatalf("err = %v, want ErrUnknownTool", err)
		}
	})
	t.Run("invalid arguments list every failing field", func(t *testing.T) {
		res, err := h.CallTool(ctx, mcp.CallRequest{Name: gen.ToolListRuns, Arguments: json.RawMessage(`{"limit": 500, "bogus": 1, "window": "9y"}`)})
		if err != nil || !res.IsError {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
		var te toolerr.Error
		if err := json.Unmarshal(res.Structured, &te); err != nil {
			t.Fatal(err)
		}
		if te.Code != "invalid_arguments" || len(te.Fields) != 3 {
			t.Fatalf("error = %+v", te)
		}
		pointers := map[string]bool{}
		for _, f := range te.Fields {
			pointers[f.Pointer] = true
		}
		for _, p := range []string{"/limit", "/bogus", "/window"} {
			if !pointers[p] {
				t.Errorf("no field error at %s: %+v", p, te.Fields)
			}
		}
	})
	t.Run("a domain error keeps its code and hint", func(t *testing.T) {
		flows.getRun = func() (gen.GetRunOutput, error) {
			return gen.GetRunOutput{}, toolerr.New("run_not_found", "no run abc").WithHint("call list_runs")
		}
		res, err := h.CallTool(ctx, mcp.CallRequest{Name: gen.ToolGetRun, Arguments: json.RawMessage(`{"id":"abc"}`)})
		if err != nil || !res.IsError || !strings.Contains(string(res.Structured), `"code":"run_not_found"`) || !strings.Contains(string(res.Structured), "list_runs") {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
	})
	t.Run("an unexpected failure leaks nothing", func(t *testing.T) {
		flows.getRun = func() (gen.GetRunOutput, error) {
			return gen.GetRunOutput{}, errors.New("open /home/alice/secret.db: permission denied")
		}
		res, err := h.CallTool(ctx, mcp.CallRequest{Name: gen.ToolGetRun, Arguments: json.RawMessage(`{"id":"abc"}`)})
		if err != nil || !res.IsError || strings.Contains(string(res.Structured), "alice") || !strings.Contains(string(res.Structured), `"code":"internal"`) {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
	})
	t.Run("an answer that breaks its own schema is a protocol error", func(t *testing.T) {
		flows.getRun = func() (gen.GetRunOutput, error) {
			return gen.GetRunOutput{ID: "x", TraceID: new(string), Summary: "s", OmittedSpans: -1}, nil
		}
		_, err := h.CallTool(ctx, mcp.CallRequest{Name: gen.ToolGetRun, Arguments: json.RawMessage(`{"id":"abc"}`)})
		var me *mcp.Error
		if !errors.As(err, &me) || me.Code != mcp.CodeInternal {
			t.Fatalf("err = %v, want a -32603 mcp.Error", err)
		}
	})
}

func TestCompactRouterAnswersLikeTheFullTool(t *testing.T) {
	adv, err := newAdversary()
	if err != nil {
		t.Fatal(err)
	}
	full := New(Options{Flows: adv})
	compact := New(Options{Flows: adv, Profile: ProfileCompact})
	ctx := context.Background()

	if got := len(compact.Tools()); got != 2 {
		t.Fatalf("compact profile lists %d tools, want 2", got)
	}
	for _, tool := range gen.Tools {
		args := validInput(t, tool.Name, "")
		want, err := full.CallTool(ctx, mcp.CallRequest{Name: tool.Name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		routed, _ := json.Marshal(map[string]any{"operation": tool.Name, "arguments": json.RawMessage(args)})
		got, err := compact.CallTool(ctx, mcp.CallRequest{Name: gen.ToolRunlens, Arguments: routed})
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Structured) != string(want.Structured) || got.IsError != want.IsError {
			t.Fatalf("%s: routed answer differs from the full tool's", tool.Name)
		}
	}

	t.Run("an unknown operation names the valid ones", func(t *testing.T) {
		res, err := compact.CallTool(ctx, mcp.CallRequest{Name: gen.ToolRunlens, Arguments: json.RawMessage(`{"operation":"drop_tables"}`)})
		if err != nil || !res.IsError || !strings.Contains(string(res.Structured), "/operation") {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
	})
	t.Run("bad arguments name the operation and the field", func(t *testing.T) {
		res, err := compact.CallTool(ctx, mcp.CallRequest{Name: gen.ToolRunlens, Arguments: json.RawMessage(`{"operation":"list_runs","arguments":{"limit":0}}`)})
		if err != nil || !res.IsError || !strings.Contains(string(res.Structured), "operation list_runs") || !strings.Contains(string(res.Structured), "/limit") {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
	})
	t.Run("capabilities list every operation with its arguments", func(t *testing.T) {
		res, err := compact.CallTool(ctx, mcp.CallRequest{Name: gen.ToolRunlensCapabilities, Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError {
			t.Fatalf("res = %s, err = %v", res.Structured, err)
		}
		var caps gen.RunlensCapabilitiesOutput
		if err := json.Unmarshal(res.Structured, &caps); err != nil {
			t.Fatal(err)
		}
		if caps.Profile != "compact" || len(caps.Operations) != len(gen.Tools) || caps.Operations[0].Name != gen.ToolGetAppStatus || len(caps.Operations[0].Arguments) == 0 {
			t.Fatalf("capabilities = %+v", caps)
		}
	})
	t.Run("the full profile does not serve the router", func(t *testing.T) {
		if _, err := full.CallTool(ctx, mcp.CallRequest{Name: gen.ToolRunlens, Arguments: json.RawMessage(`{}`)}); !errors.Is(err, mcp.ErrUnknownTool) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestFullDetailAboveItsCeilingIsRefusedWithAdvice(t *testing.T) {
	adv, err := newAdversary()
	if err != nil {
		t.Fatal(err)
	}
	const ceiling = 64 << 10
	h := New(Options{Flows: adv, Budgets: Budgets{FullCeiling: ceiling}})
	for _, tool := range []string{gen.ToolListRuns, gen.ToolGetRecentErrors} {
		if n := len(adv.answers[tool]); n <= 2*ceiling {
			t.Fatalf("%s: adversarial answer is %d bytes, too small to exercise the ceiling", tool, n)
		}
		res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: validInput(t, tool, "full")})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(string(res.Structured), `"code":"output_too_large"`) || !strings.Contains(string(res.Structured), "detail=standard") {
			t.Fatalf("%s full above the ceiling: %s", tool, res.Structured)
		}
		res, err = h.CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: validInput(t, tool, "standard")})
		if err != nil || res.IsError {
			t.Fatalf("%s standard: %v %s", tool, err, res.Structured)
		}
	}
}
