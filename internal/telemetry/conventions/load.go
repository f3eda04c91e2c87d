package conventions

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/runlens/runlens/internal/contract"
)

// The presets are embedded so the binary needs no files to classify telemetry; the schema a
// document must pass is the published one, generated into gen.
//
//go:embed presets/*.json
var presetFiles embed.FS

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

// validate checks a decoded document against the published conventions schema (through its
// generated validator, as tool arguments, answers and runlens.json are checked), naming every
// failing field by its pointer.
func validate(doc map[string]any) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode conventions: %w", err)
	}
	fields, err := contract.Validate("conventions.schema.json", raw)
	if err != nil {
		return fmt.Errorf("validate conventions: %w", err)
	}
	if len(fields) > 0 {
		problems := make([]string, len(fields))
		for i, f := range fields {
			problems[i] = cmp.Or(f.Pointer, "/") + ": " + f.Message
		}
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
