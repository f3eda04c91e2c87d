package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/mcp"
)

// TestCapabilitiesGiveEachOperationsRealInputSchema is what an agent on the compact profile
// relies on to build arguments: for every operation, runlens_capabilities with that operation
// returns the operation's published bundled input schema inline, equal to the file the full
// profile publishes, and a client that compiles it accepts the operation's valid examples and
// rejects its invalid ones.
func TestCapabilitiesGiveEachOperationsRealInputSchema(t *testing.T) {
	h := New(Options{Flows: &adversary{}, Profile: ProfileCompact})
	caps, _ := gen.Lookup(gen.ToolRunlensCapabilities)
	v := oracle.NewValidator()
	if len(gen.FullProfile) != 13 {
		t.Fatalf("the full profile has %d operations, want 13", len(gen.FullProfile))
	}
	for _, name := range gen.FullProfile {
		t.Run(name, func(t *testing.T) {
			raw := callCapabilities(t, h, `{"operation":"`+name+`"}`)
			if fields, err := v.Validate("runlens_capabilities.output", caps.OutputSchema, raw); err != nil || len(fields) > 0 {
				t.Fatalf("the answer fails its output schema: %v %v", fields, err)
			}
			var out struct {
				Operations []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"operations"`
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Operations) != 1 || out.Operations[0].Name != name || out.Operations[0].InputSchema == nil {
				t.Fatalf("want exactly %s with its input schema, got %s", name, raw)
			}
			schema := out.Operations[0].InputSchema
			full, _ := gen.Lookup(name)
			if !sameJSON(t, schema, full.InputSchema) {
				t.Fatalf("the inline schema differs from the published input schema of %s:\n%s", name, schema)
			}

			examples, _ := filepath.Glob(filepath.Join("..", "..", "schemas", "examples", name, "*-input-*.json"))
			if len(examples) == 0 {
				t.Fatalf("no input examples for %s", name)
			}
			for _, file := range examples {
				args, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				fields, err := v.Validate("inline:"+name, schema, args)
				if err != nil {
					t.Fatalf("a client cannot use the inline schema: %v", err)
				}
				valid := filepath.Base(file)[:len("valid")] == "valid"
				if valid && len(fields) > 0 {
					t.Errorf("%s is rejected by the inline schema: %v", filepath.Base(file), fields)
				}
				if !valid && len(fields) == 0 {
					t.Errorf("%s is accepted by the inline schema", filepath.Base(file))
				}
			}
		})
	}
}

// TestCapabilitiesDefaultAnswerIsCompact lists every operation with its argument names, the
// required ones, and no schema, within the summary budget: the compact profile exists to keep
// what the model reads up front small.
func TestCapabilitiesDefaultAnswerIsCompact(t *testing.T) {
	reachable := true
	h := New(Options{Flows: &adversary{}, Profile: ProfileCompact, Sources: func(context.Context) []Source {
		return []Source{{Kind: "embedded", Endpoint: "http://127.0.0.1:4318", Reachable: &reachable}}
	}})
	raw := callCapabilities(t, h, `{}`)
	caps, _ := gen.Lookup(gen.ToolRunlensCapabilities)
	if len(raw) > caps.Budget.Summary {
		t.Errorf("the default answer is %d bytes, over the %d-byte summary budget", len(raw), caps.Budget.Summary)
	}
	var out gen.RunlensCapabilitiesOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, op := range out.Operations {
		names = append(names, string(op.Name))
		tool, _ := gen.Lookup(string(op.Name))
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(func(yield func(string) bool) {
			for k := range s.Properties {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(op.Arguments, want) || !slices.Equal(op.Required, s.Required) {
			t.Errorf("%s: arguments %v required %v, want %v and %v", op.Name, op.Arguments, op.Required, want, s.Required)
		}
		if op.InputSchema != nil || op.Description == nil || *op.Description == "" {
			t.Errorf("%s: want a description and no inline schema, got %+v", op.Name, op)
		}
	}
	if !slices.Equal(names, gen.FullProfile) {
		t.Errorf("operations %v, want %v", names, gen.FullProfile)
	}
}

// callCapabilities calls runlens_capabilities and returns its structuredContent.
func callCapabilities(t *testing.T, h *Handler, args string) []byte {
	t.Helper()
	res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: gen.ToolRunlensCapabilities, Arguments: json.RawMessage(args)})
	if err != nil || res.IsError {
		t.Fatalf("runlens_capabilities %s: %v %s", args, err, res.Structured)
	}
	return res.Structured
}

// sameJSON reports whether two documents hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
