package conventions

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The presets and a copy of schemas/conventions.schema.json (kept identical by a test) are
// embedded so the binary needs no files to classify telemetry.
var (
	//go:embed presets/*.json
	presetFiles embed.FS
	//go:embed conventions.schema.json
	schemaJSON []byte
)

// DefaultPreset is the preset used when a document names none.
const DefaultPreset = "otel"

// ErrInvalid marks a conventions document that fails its schema or names an unknown preset;
// the message lists what is wrong so a user can fix the configuration.
var ErrInvalid = errors.New("invalid conventions")

// PresetNames lists the built-in presets.
func PresetNames() []string { return []string{"otel", "netscript"} }

// Preset returns a built-in preset by name.
func Preset(name string) (*Conventions, error) {
	return Load([]byte(`{"preset":` + quote(name) + `}`))
}

// Default returns the otel preset; it cannot fail because the presets are tested.
func Default() *Conventions {
	c, err := Preset(DefaultPreset)
	if err != nil {
		panic("conventions: built-in preset is invalid: " + err.Error())
	}
	return c
}

// Load merges an override document over the preset it names (otel when it names none) and
// validates the result: objects merge key by key, lists replace, scalars override. An empty
// override yields the preset itself.
func Load(override []byte) (*Conventions, error) {
	var over map[string]any
	if len(bytes.TrimSpace(override)) > 0 {
		if err := json.Unmarshal(override, &over); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if over == nil {
			return nil, fmt.Errorf("%w: document must be an object", ErrInvalid)
		}
		if err := validate(over); err != nil {
			return nil, err
		}
	}
	name := DefaultPreset
	if p, ok := over["preset"].(string); ok {
		name = p
	}
	raw, err := presetFiles.ReadFile("presets/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w: unknown preset %q", ErrInvalid, name)
	}
	var base map[string]any
	if err := json.Unmarshal(raw, &base); err != nil {
		return nil, fmt.Errorf("read preset %s: %w", name, err)
	}
	merged := merge(base, over)
	if err := validate(merged); err != nil {
		return nil, err
	}
	doc, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encode conventions: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var c Conventions
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &c, nil
}

// merge lays over onto base: nested objects merge, everything else (lists included) replaces.
func merge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bo, bok := out[k].(map[string]any)
		oo, ook := v.(map[string]any)
		if bok && ook {
			out[k] = merge(bo, oo)
			continue
		}
		out[k] = v
	}
	return out
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validate checks a decoded document against the conventions schema.
func validate(doc map[string]any) error {
	schemaOnce.Do(func() {
		parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			schemaErr = fmt.Errorf("parse conventions schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		const url = "https://runlens.dev/schemas/conventions.schema.json"
		if err := c.AddResource(url, parsed); err != nil {
			schemaErr = fmt.Errorf("load conventions schema: %w", err)
			return
		}
		schema, schemaErr = c.Compile(url)
	})
	if schemaErr != nil {
		return schemaErr
	}
	// Round-trip through the validator's own decoder so numbers have the types it expects.
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode conventions: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("decode conventions: %w", err)
	}
	if err := schema.Validate(inst); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
