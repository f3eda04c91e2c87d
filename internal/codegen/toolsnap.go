package codegen

import (
	"encoding/json"
	"fmt"
)

// ToolEntry is one tools/list entry as runlens serves it (the newest protocol revision, where
// title, annotations and outputSchema are all present).
func (m *Model) ToolEntry(t *Tool) (map[string]any, error) {
	var in, out any
	if err := json.Unmarshal(t.ListedInput, &in); err != nil {
		return nil, fmt.Errorf("decode %s input schema: %w", t.Meta.Name, err)
	}
	if err := json.Unmarshal(t.ListedOutput, &out); err != nil {
		return nil, fmt.Errorf("decode %s output schema: %w", t.Meta.Name, err)
	}
	ann := map[string]any{}
	a := t.Meta.Annotations
	for k, v := range map[string]*bool{
		"readOnlyHint": a.ReadOnlyHint, "destructiveHint": a.DestructiveHint,
		"idempotentHint": a.IdempotentHint, "openWorldHint": a.OpenWorldHint,
	} {
		if v != nil {
			ann[k] = *v
		}
	}
	return map[string]any{
		"name": t.Meta.Name, "title": t.Meta.Title, "description": t.Meta.Description,
		"annotations": ann, "inputSchema": json.RawMessage(t.ListedInput), "outputSchema": json.RawMessage(t.ListedOutput),
	}, nil
}

// Snapshot renders a tool's tools/list entry for a golden file: sorted keys, two-space indent.
func (m *Model) Snapshot(t *Tool) ([]byte, error) {
	e, err := m.ToolEntry(t)
	if err != nil {
		return nil, err
	}
	c, err := compactJSON(e)
	if err != nil {
		return nil, err
	}
	return indentJSON(c)
}

// ToolsListSize is the size in bytes of the compact JSON array of tools/list entries for the
// given tools: the bootstrap cost a client pays before its first call.
func (m *Model) ToolsListSize(tools []*Tool) (int, error) {
	var entries []any
	for _, t := range tools {
		e, err := m.ToolEntry(t)
		if err != nil {
			return 0, err
		}
		entries = append(entries, e)
	}
	b, err := compactJSON(entries)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}
