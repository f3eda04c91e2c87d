package contract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/contract"
)

func TestValidateReportsEveryFailingFieldOfAPublishedSchema(t *testing.T) {
	path := contract.InputPath("list_runs")
	tests := []struct {
		name     string
		instance string
		want     []contract.FieldError
	}{
		{"valid arguments have no errors", `{"limit": 5, "window": "15m", "detail": "full"}`, nil},
		{"an unknown property is named at its own pointer", `{"foo": 1}`,
			[]contract.FieldError{{Pointer: "/foo", Message: "additional property 'foo' not allowed"}}},
		{"a bound says what was expected and what came", `{"limit": 500}`,
			[]contract.FieldError{{Pointer: "/limit", Message: "maximum is 100, got 500"}}},
		{"a number with a fraction is not an integer", `{"limit": 2.5}`,
			[]contract.FieldError{{Pointer: "/limit", Message: "expected integer, got number"}}},
		{"an integer written with a zero fraction is one", `{"limit": 2.0}`, nil},
		{"an enum lists the allowed values", `{"detail": "huge"}`,
			[]contract.FieldError{{Pointer: "/detail", Message: "must be one of 'summary', 'standard', 'full'"}}},
		{"a pattern is quoted, the value is not echoed", `{"window": "secret-token"}`,
			[]contract.FieldError{{Pointer: "/window", Message: `must match pattern ^[1-9]\d{0,3}[smhd]$`}}},
		{"a length counts characters, not bytes", `{"domain": "` + strings.Repeat("é", 65) + `"}`,
			[]contract.FieldError{{Pointer: "/domain", Message: "maximum length is 64 characters, got 65"}}},
		{"several failures come sorted by pointer", `{"status": 1, "limit": 0, "bad": true}`,
			[]contract.FieldError{
				{Pointer: "/bad", Message: "additional property 'bad' not allowed"},
				{Pointer: "/limit", Message: "minimum is 1, got 0"},
				{Pointer: "/status", Message: "expected string, got number"},
			}},
		{"a root of the wrong type has the empty pointer", `[]`,
			[]contract.FieldError{{Pointer: "", Message: "expected object, got array"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := contract.Validate(path, []byte(tc.instance))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestValidateRejectsWhatIsNotJSONOrNotPublished(t *testing.T) {
	if _, err := contract.Validate(contract.InputPath("list_runs"), []byte(`{"limit":`)); err == nil {
		t.Error("an instance that is not JSON must be an error, not a field error")
	}
	if _, err := contract.Validate(contract.InputPath("list_runs"), []byte(`{} {}`)); err == nil {
		t.Error("data after the instance must be an error")
	}
	if _, err := contract.Validate("tools/no_such_tool.input.json", []byte(`{}`)); err == nil {
		t.Error("a path no schema is published at must be an error")
	}
}
