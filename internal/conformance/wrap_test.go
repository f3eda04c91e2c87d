package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/runlens/runlens/internal/mcp"
)

// realHandler stands for runlens's own handler: two tools, one named like a fixture.
type realHandler struct{ calls []string }

func (r *realHandler) Tools() []mcp.ToolInfo {
	object := json.RawMessage(`{"type":"object"}`)
	return []mcp.ToolInfo{
		{Name: "list_docs", Description: "Lists docs.", InputSchema: object},
		{Name: "test_simple_text", Description: "A real tool that happens to share a fixture's name.", InputSchema: object},
	}
}

func (r *realHandler) CallTool(_ context.Context, req mcp.CallRequest) (mcp.CallResult, error) {
	r.calls = append(r.calls, req.Name)
	return mcp.CallResult{Structured: json.RawMessage(`{"real":true}`)}, nil
}

func names(tools []mcp.ToolInfo) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestWrappedToolsAreTheRealOnesFollowedByTheFixtures(t *testing.T) {
	w := Wrap(&realHandler{})
	got := names(w.Tools())
	want := []string{"list_docs", "test_simple_text", "test_error_handling", "test_missing_capability", "test_logging_tool", "test_streaming_elicitation"}
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if err := mcp.CheckTools(w.Tools()); err != nil {
		t.Errorf("the wrapped list breaks the protocol's tool rules: %v", err)
	}
}

func TestWrappedCalls(t *testing.T) {
	tests := []struct {
		name       string
		tool       string
		wantReal   bool   // the call reaches the real handler
		wantError  bool   // isError result
		wantRPC    int    // JSON-RPC error code, 0 for none
		wantInBody string // a key the structured answer must carry
	}{
		{name: "a real tool's call reaches the real handler unchanged", tool: "list_docs", wantReal: true, wantInBody: "real"},
		{name: "a real tool sharing a fixture's name keeps its own behaviour", tool: "test_simple_text", wantReal: true, wantInBody: "real"},
		{name: "test_error_handling answers with a tool error carrying a message", tool: "test_error_handling", wantError: true, wantInBody: "message"},
		{name: "test_missing_capability is refused with the missing-capability error", tool: "test_missing_capability", wantRPC: CodeMissingClientCapability},
		{name: "test_logging_tool completes without logging", tool: "test_logging_tool", wantInBody: "text"},
		{name: "test_streaming_elicitation completes without asking anything", tool: "test_streaming_elicitation", wantInBody: "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &realHandler{}
			res, err := Wrap(inner).CallTool(context.Background(), mcp.CallRequest{Name: tt.tool, Arguments: json.RawMessage(`{}`)})
			if reached := slices.Contains(inner.calls, tt.tool); reached != tt.wantReal {
				t.Errorf("reached the real handler = %v, want %v", reached, tt.wantReal)
			}
			if tt.wantRPC != 0 {
				var rpcErr *mcp.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != tt.wantRPC {
					t.Fatalf("err = %v, want JSON-RPC error %d", err, tt.wantRPC)
				}
				data, _ := json.Marshal(rpcErr.Data)
				if string(data) != `{"requiredCapabilities":{"sampling":{}}}` {
					t.Errorf("error data = %s, want the missing capability as a ClientCapabilities object", data)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if res.IsError != tt.wantError {
				t.Errorf("isError = %v, want %v", res.IsError, tt.wantError)
			}
			var body map[string]any
			if err := json.Unmarshal(res.Structured, &body); err != nil {
				t.Fatalf("answer is not a JSON object: %s", res.Structured)
			}
			if _, ok := body[tt.wantInBody]; !ok {
				t.Errorf("answer %s has no %q", res.Structured, tt.wantInBody)
			}
		})
	}
}
