package codegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintRejectsEachBrokenRule runs generation on the fixture tree with one file replaced by a
// fixture from testdata/lint that breaks exactly one rule, and expects generation to fail with
// an error that names the place and the rule.
func TestLintRejectsEachBrokenRule(t *testing.T) {
	const input = "schemas/tools/get_widget.input.json"
	const meta = "schemas/tools/get_widget.tool.json"
	tests := []struct {
		fixture string
		want    string
	}{
		{"undescribed-property.input.json", input + "#/properties/x: property x has no description"},
		{"array-without-items.input.json", input + "#/properties/x: array without items"},
		{"array-without-maxitems.input.json", input + "#/properties/x: array without maxItems"},
		{"object-without-additional-properties.input.json", input + "#/properties/x: object without additionalProperties: false"},
		{"additional-properties-true.input.json", input + "#/properties/x/additionalProperties: additionalProperties must be false"},
		{"map-without-maxproperties.input.json", input + "#/properties/x: a map (additionalProperties schema) needs maxProperties"},
		{"map-value-undescribed.input.json", input + "#/properties/x/additionalProperties: a map's value schema needs a description"},
		{"string-without-maxlength.input.json", input + "#/properties/x: string without maxLength"},
		{"untyped-enum.input.json", input + "#/properties/x/enum: enum must be typed"},
		{"forbidden-prefixitems.input.json", input + "#/properties/x/prefixItems: keyword prefixItems is forbidden"},
		{"forbidden-dynamicref.input.json", input + "#/properties/x/$dynamicRef: keyword $dynamicRef is forbidden"},
		{"forbidden-anchor.input.json", input + "#/properties/x/$anchor: keyword $anchor is forbidden"},
		{"forbidden-dependentschemas.input.json", input + "#/properties/x/dependentSchemas: keyword dependentSchemas is forbidden"},
		{"forbidden-unevaluatedproperties.input.json", input + "#/properties/x/unevaluatedProperties: keyword unevaluatedProperties is forbidden"},
		{"remote-ref.input.json", input + "#/properties/x/$ref: $ref \"https://example.com/schemas/page.json\" is remote"},
		{"boolean-subschema.input.json", input + "#/properties/x: boolean subschema true is not allowed"},
		{"maximum-not-integer.input.json", input + "#/properties/x/maximum: maximum must be an integer"},
		{"ref-with-siblings.input.json", input + "#/properties/x/default: default next to $ref is not allowed"},
		{"unknown-keyword.input.json", input + "#/properties/x/maxlength: unknown keyword maxlength"},
		{"default-out-of-range.input.json", input + "#/properties/x/default: default 20 is above maximum 10"},
		{"root-not-object.input.json", input + "#/type: the root of a tool or configuration schema must be type object"},
		{"unvalidated-uniqueitems.input.json", input + "#/properties/x/uniqueItems: keyword uniqueItems has no generated validator"},
		{"pattern-lookahead.input.json", input + "#/properties/x/pattern: pattern \"^(?!admin)[a-z]+$\": group (?! has no RE2 equivalent"},
		{"pattern-backreference.input.json", input + "#/properties/x/pattern: pattern \"^(a)\\\\1$\": back-reference \\1 has no RE2 equivalent"},
		{"tool-without-title.tool.json", meta + "#/title: tool has no title"},
		{"tool-without-description.tool.json", meta + "#/description: tool has no description"},
		{"tool-without-annotations.tool.json", meta + "#/annotations: tool has no annotations"},
	}
	fixtures, err := filepath.Glob("testdata/lint/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) != len(tests) {
		t.Errorf("testdata/lint holds %d fixtures, the table covers %d: every fixture needs a case", len(fixtures), len(tests))
	}
	for _, tc := range tests {
		t.Run(strings.TrimSuffix(tc.fixture, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/lint", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			target := "tools/get_widget.input.json"
			if strings.HasSuffix(tc.fixture, ".tool.json") {
				target = "tools/get_widget.tool.json"
			}
			_, _, err = Generate(fixtureFS(t, map[string][]byte{target: data}), "schemas")
			if err == nil {
				t.Fatal("generation succeeded; want it to fail")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say %q:\n%v", tc.want, err)
			}
		})
	}
}

// TestLintAcceptsTheFixtureTree guards the base the lint fixtures modify: it must be clean, or
// every lint case would pass for the wrong reason.
func TestLintAcceptsTheFixtureTree(t *testing.T) {
	src, err := Load(fixtureFS(t, nil), "schemas")
	if err != nil {
		t.Fatal(err)
	}
	if err := Lint(src); err != nil {
		t.Fatalf("the fixture tree breaks a rule:\n%v", err)
	}
}

func TestMetaSchemasCheckTheGeneratorsOwnFiles(t *testing.T) {
	tests := []struct {
		name, file, content, want string
	}{
		{"a registry key the meta schema does not know", "registry.json",
			`{"full": ["get_widget", "list_widgets"], "compact": ["router"], "extra": 1}`,
			"schemas/registry.json#: additional properties 'extra' not allowed (per schemas/meta/registry.schema.json)"},
		{"a tool family the meta schema does not know", "tools/get_widget.tool.json",
			`{"name": "get_widget", "title": "Get widget", "description": "One widget.", "family": "gadgets",
			  "annotations": {"readOnlyHint": true, "openWorldHint": false}, "budget": {"standard": 16384, "summary": 4096}}`,
			"schemas/tools/get_widget.tool.json#/family: value must be one of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Generate(fixtureFS(t, map[string][]byte{tc.file: []byte(tc.content)}), "schemas")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
