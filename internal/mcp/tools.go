package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// toolNamePattern is the MCP tool-name rule every published name must satisfy.
// It is compiled on first use: the bounded repetition makes a large program that serve would
// otherwise build at start-up.
var toolNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

// defaultInputSchema stands in for a tool that declares no input schema, since inputSchema is
// required on the wire.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// CheckTools reports every way tools break the protocol's rules: names outside
// ^[A-Za-z0-9_.-]{1,128}$, duplicates, missing descriptions, schemas that are not JSON objects.
// Serve refuses to start on such a list, so a registry test can call this to fail earlier.
func CheckTools(tools []ToolInfo) error {
	var errs []error
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if !toolNamePattern().MatchString(t.Name) {
			errs = append(errs, fmt.Errorf("tool %d: name %q does not match %s", i, t.Name, toolNamePattern()))
		}
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("tool %q: listed twice", t.Name))
		}
		seen[t.Name] = true
		if strings.TrimSpace(t.Description) == "" {
			errs = append(errs, fmt.Errorf("tool %q: description is empty", t.Name))
		}
		if len(t.InputSchema) > 0 && !isJSONObject(t.InputSchema) {
			errs = append(errs, fmt.Errorf("tool %q: input schema is not a JSON object", t.Name))
		}
		if len(t.OutputSchema) > 0 && !isJSONObject(t.OutputSchema) {
			errs = append(errs, fmt.Errorf("tool %q: output schema is not a JSON object", t.Name))
		}
	}
	return errors.Join(errs...)
}

// isJSONObject reports whether raw is one valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}

// wireTool is one tools/list entry as sent.
type wireTool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *wireAnnotations `json:"annotations,omitempty"`
}

type wireAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// catalog is the tool list rendered once for each wire dialect, so tools/list only slices.
type catalog struct {
	names       map[string]bool
	hasOutput   map[string]bool   // tools that declare an output schema
	plain       []json.RawMessage // before 2025-03-26: name, description, inputSchema
	annotated   []json.RawMessage // 2025-03-26: plus annotations
	structured  []json.RawMessage // 2025-06-18 and later: plus title and outputSchema
	fingerprint string            // binds cursors to this exact list
}

// newCatalog renders tools in the order given: the registry's order is the published order.
func newCatalog(tools []ToolInfo) (*catalog, error) {
	if err := CheckTools(tools); err != nil {
		return nil, fmt.Errorf("check tools: %w", err)
	}
	c := &catalog{names: make(map[string]bool, len(tools)), hasOutput: make(map[string]bool, len(tools))}
	sum := sha256.New()
	for _, t := range tools {
		c.names[t.Name] = true
		c.hasOutput[t.Name] = len(bytes.TrimSpace(t.OutputSchema)) > 0
		input, err := compactJSON(t.InputSchema, defaultInputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		output, err := compactJSON(t.OutputSchema, nil)
		if err != nil {
			return nil, fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
		base := wireTool{Name: t.Name, Description: t.Description, InputSchema: input}
		annotated := base
		annotated.Annotations = wireAnnotationsOf(t.Annotations)
		structured := annotated
		structured.Title = t.Title
		structured.OutputSchema = output
		for _, pair := range []struct {
			dst *[]json.RawMessage
			v   wireTool
		}{{&c.plain, base}, {&c.annotated, annotated}, {&c.structured, structured}} {
			raw, err := json.Marshal(pair.v)
			if err != nil {
				return nil, fmt.Errorf("tool %q: render: %w", t.Name, err)
			}
			*pair.dst = append(*pair.dst, raw)
		}
		fmt.Fprintf(sum, "%s\x00", t.Name)
	}
	c.fingerprint = hex.EncodeToString(sum.Sum(nil)[:8])
	return c, nil
}

func wireAnnotationsOf(a *Annotations) *wireAnnotations {
	if a == nil || (a.ReadOnlyHint == nil && a.DestructiveHint == nil && a.IdempotentHint == nil && a.OpenWorldHint == nil) {
		return nil
	}
	return &wireAnnotations{
		ReadOnlyHint:    a.ReadOnlyHint,
		DestructiveHint: a.DestructiveHint,
		IdempotentHint:  a.IdempotentHint,
		OpenWorldHint:   a.OpenWorldHint,
	}
}

// compactJSON returns raw without insignificant whitespace, or fallback when raw is empty.
func compactJSON(raw, fallback json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fallback, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	return buf.Bytes(), nil
}

// entries returns the rendering of the list for revision v.
func (c *catalog) entries(f features) []json.RawMessage {
	switch {
	case f.structured:
		return c.structured
	case f.annotations:
		return c.annotated
	default:
		return c.plain
	}
}

// listToolsResult is the tools/list result. The modern fields are empty, and so omitted, in
// the legacy era.
type listToolsResult struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor,omitempty"`
	cacheable
}

// cacheable carries the modern-era result fields of cacheable results.
type cacheable struct {
	ResultType string `json:"resultType,omitempty"`
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// listTTLMs is how long a modern client may cache tools/list and server/discover: the list
// never changes while the process runs (listChanged is false), so a minute is safe and saves
// clients re-fetching on every turn.
const listTTLMs = 60_000

func modernCacheable(f features) cacheable {
	if !f.modern {
		return cacheable{}
	}
	ttl := listTTLMs
	return cacheable{ResultType: resultTypeComplete, TTLMs: &ttl, CacheScope: "public"}
}

// resultTypeComplete marks a final result in the modern era.
const resultTypeComplete = "complete"

// page returns one page of the list starting at cursor ("" for the first page).
func (c *catalog) page(f features, cursor string, pageSize int) (listToolsResult, *Error) {
	all := c.entries(f)
	start := 0
	if cursor != "" {
		var ok bool
		if start, ok = c.decodeCursor(cursor, len(all)); !ok {
			return listToolsResult{}, &Error{Code: CodeInvalidParams, Message: "invalid params: cursor is not one this server issued for this tool list; list again without a cursor"}
		}
	}
	end := len(all)
	res := listToolsResult{cacheable: modernCacheable(f)}
	if pageSize > 0 && start+pageSize < end {
		end = start + pageSize
		res.NextCursor = c.encodeCursor(end)
	}
	res.Tools = all[start:end]
	return res, nil
}

// pageCursor is the content of a tools/list cursor: an offset bound to the list it pages.
type pageCursor struct {
	Offset      int    `json:"o"`
	Fingerprint string `json:"f"`
}

func (c *catalog) encodeCursor(offset int) string {
	raw, _ := json.Marshal(pageCursor{Offset: offset, Fingerprint: c.fingerprint})
	return base64.RawURLEncoding.EncodeToString(raw)
}

func (c *catalog) decodeCursor(cursor string, n int) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	var pc pageCursor
	if json.Unmarshal(raw, &pc) != nil || pc.Fingerprint != c.fingerprint || pc.Offset <= 0 || pc.Offset >= n {
		return 0, false
	}
	return pc.Offset, true
}
