package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Bootstrap is the size of what a host loads at start-up: the tools/list result as compact
// JSON, whole and per tool, split into the part hosts hand the model (name, title,
// description, inputSchema, annotations) and the output schemas, which clients use to check
// answers.
type Bootstrap struct {
	Label string
	Bytes int
	// ModelVisible is the compact JSON of {"tools": [...]} with each tool cut to its
	// model-visible members.
	ModelVisible int
	// Output is the sum of the tools' compact output schemas.
	Output int
	Tools  []ToolSize
}

// ToolSize is one tool's share of the bootstrap.
type ToolSize struct {
	Name         string
	Bytes        int
	ModelVisible int
	Output       int
}

// modelVisible are the members of a tools/list entry that hosts hand the model.
var modelVisible = []string{"name", "title", "description", "inputSchema", "annotations"}

// MeasureBootstrap compacts a tools/list result and measures it.
func MeasureBootstrap(label string, list json.RawMessage) (Bootstrap, error) {
	var whole bytes.Buffer
	if err := json.Compact(&whole, list); err != nil {
		return Bootstrap{}, fmt.Errorf("compact tools/list: %w", err)
	}
	var l struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return Bootstrap{}, fmt.Errorf("decode tools/list: %w", err)
	}
	b := Bootstrap{Label: label, Bytes: whole.Len()}
	visible := make([]json.RawMessage, 0, len(l.Tools))
	for _, raw := range l.Tools {
		var one bytes.Buffer
		if err := json.Compact(&one, raw); err != nil {
			return Bootstrap{}, fmt.Errorf("compact tool: %w", err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return Bootstrap{}, fmt.Errorf("decode tool: %w", err)
		}
		var name string
		_ = json.Unmarshal(members["name"], &name)
		seen, err := visiblePart(members)
		if err != nil {
			return Bootstrap{}, fmt.Errorf("%s: %w", name, err)
		}
		var out bytes.Buffer
		if o, ok := members["outputSchema"]; ok {
			if err := json.Compact(&out, o); err != nil {
				return Bootstrap{}, fmt.Errorf("%s: compact output schema: %w", name, err)
			}
		}
		visible = append(visible, seen)
		b.Output += out.Len()
		b.Tools = append(b.Tools, ToolSize{Name: name, Bytes: one.Len(), ModelVisible: len(seen), Output: out.Len()})
	}
	all, err := json.Marshal(struct {
		Tools []json.RawMessage `json:"tools"`
	}{visible})
	if err != nil {
		return Bootstrap{}, fmt.Errorf("encode model-visible part: %w", err)
	}
	b.ModelVisible = len(all)
	return b, nil
}

// visiblePart encodes the model-visible members of one tool, compact, in their listed order.
func visiblePart(members map[string]json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	for _, k := range modelVisible {
		v, ok := members[k]
		if !ok {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		key, _ := json.Marshal(k)
		buf.Write(key)
		buf.WriteByte(':')
		if err := json.Compact(&buf, v); err != nil {
			return nil, fmt.Errorf("compact %s: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
