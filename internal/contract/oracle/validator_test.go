package oracle

import (
	"fmt"
	"sync"
	"testing"
)

// widgetSchema is a small published-style schema (no $schema: the validator must treat it as
// 2020-12).
const widgetSchema = `{
  "type": "object",
  "required": ["id"],
  "additionalProperties": false,
  "properties": {
    "id": {"type": "string", "maxLength": 8},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "detail": {"type": "string", "enum": ["summary", "standard", "full"]},
    "window": {"type": "string", "pattern": "^[1-9][0-9]{0,3}[smhd]$"},
    "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 3}},
    "nested": {"type": "object", "additionalProperties": false, "properties": {"a/b": {"type": "boolean"}}}
  }
}`

func TestValidateReportsEveryFailingFieldWithItsPointer(t *testing.T) {
	tests := []struct {
		name     string
		instance string
		want     []FieldError
	}{
		{"a valid instance has no errors", `{"id": "w1", "limit": 5}`, nil},
		{"a missing required property is named at its own pointer", `{}`,
			[]FieldError{{Pointer: "/id", Message: "missing property 'id'"}}},
		{"an unknown property is named at its own pointer", `{"id": "w1", "foo": 1}`,
			[]FieldError{{Pointer: "/foo", Message: "additional property 'foo' not allowed"}}},
		{"a bound says what was expected and what came", `{"id": "w1", "limit": 500}`,
			[]FieldError{{Pointer: "/limit", Message: "maximum is 100, got 500"}}},
		{"a wrong type names both types", `{"id": 7}`,
			[]FieldError{{Pointer: "/id", Message: "expected string, got number"}}},
		{"an enum lists the allowed values", `{"id": "w1", "detail": "huge"}`,
			[]FieldError{{Pointer: "/detail", Message: "must be one of 'summary', 'standard', 'full'"}}},
		{"a pattern is quoted, the value is not echoed", `{"id": "w1", "window": "secret-token"}`,
			[]FieldError{{Pointer: "/window", Message: "must match pattern ^[1-9][0-9]{0,3}[smhd]$"}}},
		{"array items and lengths point into the array", `{"id": "w1", "tags": ["a", "long", "b"]}`,
			[]FieldError{{Pointer: "/tags", Message: "maximum is 2 items, got 3"}, {Pointer: "/tags/1", Message: "maximum length is 3 characters, got 4"}}},
		{"pointer tokens are escaped", `{"id": "w1", "nested": {"a/b": "x"}}`,
			[]FieldError{{Pointer: "/nested/a~1b", Message: "expected boolean, got string"}}},
		{"several failures come sorted by pointer", `{"limit": 0, "id": "much too long"}`,
			[]FieldError{{Pointer: "/id", Message: "maximum length is 8 characters, got 13"}, {Pointer: "/limit", Message: "minimum is 1, got 0"}}},
		{"a root of the wrong type has the empty pointer", `[]`,
			[]FieldError{{Pointer: "", Message: "expected object, got array"}}},
	}
	v := NewValidator()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Validate("widget.input", []byte(widgetSchema), []byte(tc.instance))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestValidateRejectsWhatIsNotJSON(t *testing.T) {
	v := NewValidator()
	if _, err := v.Validate("widget.input", []byte(widgetSchema), []byte(`{"id":`)); err == nil {
		t.Error("an instance that is not JSON must be an error, not a field error")
	}
	if _, err := v.Validate("broken", []byte(`{"type": 7}`), []byte(`{}`)); err == nil {
		t.Error("a schema that does not compile must be an error")
	}
}

func TestValidateCompilesEachSchemaOnceAndOnlyWhenUsed(t *testing.T) {
	v := NewValidator()
	if len(v.compiled) != 0 {
		t.Fatal("a new validator must compile nothing")
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			instance := fmt.Sprintf(`{"id": "w%d", "limit": %d}`, i%10, i%150)
			if _, err := v.Validate("widget.input", []byte(widgetSchema), []byte(instance)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(v.compiled) != 1 {
		t.Errorf("compiled %d schemas, want 1", len(v.compiled))
	}
	first := v.compiled["widget.input"].schema
	if _, err := v.Validate("widget.input", []byte(`{"type": "string"}`), []byte(`{"id": "x"}`)); err != nil {
		t.Fatal(err)
	}
	if v.compiled["widget.input"].schema != first {
		t.Error("a key's schema must be compiled once and kept")
	}
}
