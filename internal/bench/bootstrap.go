package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Bootstrap is the size of what a host loads into the model's context at start-up: the
// tools/list result as compact JSON, whole and per tool.
type Bootstrap struct {
	Label string
	Bytes int
	Tools []ToolSize
}

// ToolSize is one tool's share of the bootstrap.
type ToolSize struct {
	Name  string
	Bytes int
}

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
	for _, raw := range l.Tools {
		var one bytes.Buffer
		if err := json.Compact(&one, raw); err != nil {
			return Bootstrap{}, fmt.Errorf("compact tool: %w", err)
		}
		var t struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return Bootstrap{}, fmt.Errorf("decode tool: %w", err)
		}
		b.Tools = append(b.Tools, ToolSize{Name: t.Name, Bytes: one.Len()})
	}
	return b, nil
}
