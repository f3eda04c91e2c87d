package codegen

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestResolveRefFindsRelativeFilesAndPointers(t *testing.T) {
	src, err := Load(fixtureFS(t, nil), "schemas")
	if err != nil {
		t.Fatal(err)
	}
	from := Location{File: "schemas/tools/list_widgets.input.json", Pointer: "/properties/filter"}
	tests := []struct {
		ref  string
		want Location
	}{
		{"../defs/page.json", Location{File: "schemas/defs/page.json"}},
		{"get_widget.input.json#/$defs/filter", Location{File: "schemas/tools/get_widget.input.json", Pointer: "/$defs/filter"}},
		{"#/properties/limit", Location{File: "schemas/tools/list_widgets.input.json", Pointer: "/properties/limit"}},
		{"../defs/page.json#/properties/nextCursor", Location{File: "schemas/defs/page.json", Pointer: "/properties/nextCursor"}},
	}
	for _, tc := range tests {
		got, v, err := src.resolveRef(from, tc.ref)
		if err != nil {
			t.Errorf("resolveRef(%q): %v", tc.ref, err)
			continue
		}
		if got != tc.want || v == nil {
			t.Errorf("resolveRef(%q) = %s, want %s", tc.ref, got, tc.want)
		}
	}
}

func TestResolveRefRefusesWhatCannotBeBundled(t *testing.T) {
	src, err := Load(fixtureFS(t, nil), "schemas")
	if err != nil {
		t.Fatal(err)
	}
	from := Location{File: "schemas/tools/list_widgets.input.json", Pointer: "/properties/filter"}
	tests := []struct{ ref, want string }{
		{"https://example.com/page.json", "is remote"},
		{"//example.com/page.json", "is remote"},
		{"#anchor", "anchors are not allowed"},
		{"../defs/missing.json", "file schemas/defs/missing.json not found"},
		{"#/properties/nothing", "nothing at schemas/tools/list_widgets.input.json#/properties/nothing"},
	}
	for _, tc := range tests {
		_, _, err := src.resolveRef(from, tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resolveRef(%q) error = %v, want it to say %q", tc.ref, err, tc.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), from.String()) {
			t.Errorf("resolveRef(%q) error %q does not point at the $ref", tc.ref, err)
		}
	}
}

// selfReferencing is an input schema whose definition contains itself.
const selfReferencing = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://runlens.dev/schemas/tools/get_widget.input.json",
  "title": "get_widget input", "description": "Which widget.", "type": "object",
  "required": ["id"],
  "properties": {
    "id": {"type": "string", "maxLength": 8, "description": "Id."},
    "tree": {"$ref": "#/$defs/node", "description": "A tree."}
  },
  "additionalProperties": false,
  "$defs": {"node": {"type": "object", "description": "A node.", "additionalProperties": false,
    "properties": {"child": {"$ref": "#/$defs/node", "description": "Its child."}}},
    "filter": {"type": "object", "description": "One filter.", "additionalProperties": false, "properties": {}}}
}`

// refLoop is an input schema whose $refs point at each other without ever defining anything.
const refLoop = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://runlens.dev/schemas/tools/get_widget.input.json",
  "title": "get_widget input", "description": "Which widget.", "type": "object",
  "properties": {"a": {"$ref": "#/$defs/b", "description": "A."}},
  "additionalProperties": false,
  "$defs": {"b": {"$ref": "#/$defs/c"}, "c": {"$ref": "#/$defs/b"},
    "filter": {"type": "object", "description": "One filter.", "additionalProperties": false, "properties": {}}}
}`

func TestRefCyclesAreReported(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"a schema that contains itself", selfReferencing, "$ref cycle (a schema contains itself)"},
		{"refs that only point at each other", refLoop, "$ref cycle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Generate(fixtureFS(t, map[string][]byte{"tools/get_widget.input.json": []byte(tc.schema)}), "schemas")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to report %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "schemas/tools/get_widget.input.json#/") {
				t.Errorf("error %q does not point into the schema", err)
			}
		})
	}
}

func TestBundleInlinesEveryRefAndDropsUnpublishedKeys(t *testing.T) {
	out, _ := generateFixture(t, nil)
	for path, data := range out.Bundled {
		text := string(data)
		for _, banned := range []string{`"$ref"`, `"$schema"`, `"$id"`, `"$defs"`} {
			if strings.Contains(text, banned) {
				t.Errorf("%s still holds %s", path, banned)
			}
		}
	}
	var in map[string]any
	if err := json.Unmarshal(out.Bundled["tools/list_widgets.input.json"], &in); err != nil {
		t.Fatal(err)
	}
	filter := in["properties"].(map[string]any)["filter"].(map[string]any)
	if filter["description"] != "Only matching widgets." {
		t.Errorf("the use site's description must win over the definition's, got %q", filter["description"])
	}
	if _, ok := filter["properties"].(map[string]any)["op"]; !ok {
		t.Errorf("the referenced definition was not inlined: %v", filter)
	}
	if in["title"] != "list_widgets input" {
		t.Errorf("the root keeps its title, got %v", in["title"])
	}
	if _, ok := filter["title"]; ok {
		t.Errorf("an inlined definition must not carry its title: %v", filter)
	}
}
