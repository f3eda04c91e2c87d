package codegen

import (
	"encoding/json"
	"testing"
)

func TestListingKeepsWhatClientsNeed(t *testing.T) {
	tests := []struct {
		name       string
		list       func(any) any
		in, listed string
	}{
		{"an input schema loses its root title and description and its closedness", listInput,
			`{"title":"t input","description":"Filters.","type":"object","additionalProperties":false,"properties":{"limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"Max items."}}}`,
			`{"properties":{"limit":{"default":5,"description":"Max items.","maximum":20,"minimum":1,"type":"integer"}},"type":"object"}`},
		{"a nested input object loses its closedness and keeps a map's value shape", listInput,
			`{"type":"object","additionalProperties":false,"properties":{"compareTo":{"type":"object","additionalProperties":false,"description":"Earlier.","properties":{"window":{"type":"string","maxLength":5,"description":"Length."}}},"labels":{"type":"object","maxProperties":4,"additionalProperties":{"type":"string","maxLength":9,"description":"A value."},"description":"Labels."}}}`,
			`{"properties":{"compareTo":{"description":"Earlier.","properties":{"window":{"description":"Length.","maxLength":5,"type":"string"}},"type":"object"},"labels":{"additionalProperties":{"description":"A value.","maxLength":9,"type":"string"},"description":"Labels.","maxProperties":4,"type":"object"}},"type":"object"}`},
		{"an output schema keeps its shape and drops bounds and closedness", listOutput,
			`{"title":"t output","description":"Answer.","type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer","minimum":0,"description":"n"},"items":{"type":"array","maxItems":5,"items":{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string","maxLength":9,"enum":["a","b"],"description":"A nested field that says a lot."}}}}}}`,
			`{"properties":{"items":{"items":{"properties":{"s":{"enum":["a","b"],"type":"string"}},"type":"object"},"type":"array"},"n":{"type":"integer"}},"required":["n"],"type":"object"}`},
		{"a top-level description that explains something is kept", listOutput,
			`{"type":"object","properties":{"exitCode":{"type":"integer","description":"Exit code; -1 if none."}}}`,
			`{"properties":{"exitCode":{"description":"Exit code; -1 if none.","type":"integer"}},"type":"object"}`},
		{"a description that repeats the field name is dropped", listOutput,
			`{"type":"object","properties":{"knownServices":{"type":"array","items":{"type":"string"},"description":"The known services."}}}`,
			`{"properties":{"knownServices":{"items":{"type":"string"},"type":"array"}},"type":"object"}`},
		{"a two-word label is dropped", listOutput,
			`{"type":"object","properties":{"id":{"type":"string","description":"Run id."}}}`,
			`{"properties":{"id":{"type":"string"}},"type":"object"}`},
		{"page and scan carry no description, whatever it says", listOutput,
			`{"type":"object","properties":{"page":{"type":"object","description":"Paging of the spans of this run."}}}`,
			`{"properties":{"page":{"type":"object"}},"type":"object"}`},
		{"a map keeps its value shape", listOutput,
			`{"type":"object","properties":{"attributes":{"type":"object","maxProperties":64,"additionalProperties":{"type":"string","maxLength":10,"description":"A value."}}}}`,
			`{"properties":{"attributes":{"additionalProperties":{"type":"string"},"type":"object"}},"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.in), &v); err != nil {
				t.Fatal(err)
			}
			got, err := compactJSON(tt.list(v))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.listed {
				t.Errorf("listed\n %s\nwant\n %s", got, tt.listed)
			}
		})
	}
}

func TestRepeatsNameComparesWordsOfTheCamelCaseName(t *testing.T) {
	tests := []struct {
		name, field, description string
		want                     bool
	}{
		{"the name's own words repeat it", "p95DurationMs", "p95, ms.", true},
		{"a plural of a name word repeats it", "service", "Services.", true},
		{"a word the name lacks says more", "averageDurationMs", "Mean, ms.", false},
		{"an empty description says nothing but is not a repetition", "id", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := repeatsName(tt.field, tt.description); got != tt.want {
				t.Errorf("repeatsName(%q, %q) = %v, want %v", tt.field, tt.description, got, tt.want)
			}
		})
	}
}
