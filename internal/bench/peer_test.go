package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/golden"
)

// peerTool is one tool as the peer's snapshot (peer/tools.json) holds it.
type peerTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	Annotations  peerAnnotations `json:"annotations"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

type peerAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// TestPeerToolsMatchTheRegistry keeps the peer's snapshot of the registry in step with gen. The
// peer reads a snapshot rather than importing gen so that its binary holds the go-sdk alone, as
// a server written on that SDK would, and pays for no library runlens links.
// UPDATE_GOLDEN=1 rewrites the snapshot.
func TestPeerToolsMatchTheRegistry(t *testing.T) {
	var tools []peerTool
	for _, tool := range gen.Tools {
		a := tool.Annotations
		tools = append(tools, peerTool{
			Name:         tool.Name,
			Title:        tool.Title,
			Description:  tool.Description,
			Annotations:  peerAnnotations{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint},
			InputSchema:  tool.ListedInputSchema,
			OutputSchema: tool.ListedOutputSchema,
		})
	}
	want, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := filepath.Join("peer", "tools.json")
	if got := golden.Read(t, path, want); !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with gen.Tools: run UPDATE_GOLDEN=1 go test ./internal/bench -run TestPeerToolsMatchTheRegistry", path)
	}
}

// TestPeerAnswersMatchTheOutputSchemas keeps the peer's constant answers valid as the schemas
// change: the SDK validates them on every call, so an invalid one would fail the benchmark.
func TestPeerAnswersMatchTheOutputSchemas(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("peer", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &answers); err != nil {
		t.Fatal(err)
	}
	v := oracle.NewValidator()
	for _, tool := range gen.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			a, ok := answers[tool.Name]
			if !ok {
				t.Fatalf("no constant answer for %s", tool.Name)
			}
			fields, err := v.Validate(tool.Name+".output", tool.OutputSchema, a)
			if err != nil || len(fields) > 0 {
				t.Errorf("answer fails the output schema: %v %v", fields, err)
			}
		})
	}
	if len(answers) != len(gen.Tools) {
		t.Errorf("%d constant answers for %d tools", len(answers), len(gen.Tools))
	}
}
