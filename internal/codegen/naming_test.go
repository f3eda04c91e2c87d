package codegen

import (
	"strings"
	"testing"
)

func TestPascalWritesInitialismsInOneCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"traceId", "TraceID"},
		{"p95DurationMs", "P95DurationMs"},
		{"relatedRunIds", "RelatedRunIDs"},
		{"httpUrl", "HTTPURL"},
		{"get_app_status", "GetAppStatus"},
		{"analyze_db_bottlenecks", "AnalyzeDBBottlenecks"},
		{"utf8", "UTF8"},
		{"jsonRpcTtl", "JSONRPCTTL"},
		{"sqlStatement", "SQLStatement"},
		{"idempotentHint", "IdempotentHint"},
		{"doctor-family", "DoctorFamily"},
		{"ListRunsOutputRun", "ListRunsOutputRun"},
		{"$schema", "Schema"},
		{"9lives", "A9Lives"},
		{"", "Blank"},
	}
	for _, tc := range tests {
		if got := pascal(tc.in); got != tc.want {
			t.Errorf("pascal(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSingularNamesOneElementOfACollection(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ListRunsOutputRuns", "ListRunsOutputRun"},
		{"SearchDocsOutputMatches", "SearchDocsOutputMatch"},
		{"Entries", "Entry"},
		{"DoctorOutputStatus", "DoctorOutputStatusItem"},
		{"RelatedRunIDs", "RelatedRunID"},
		{"Args", "Arg"},
		{"History", "HistoryItem"},
	}
	for _, tc := range tests {
		if got := singular(tc.in); got != tc.want {
			t.Errorf("singular(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTypeNamesFollowTheSchemaPath(t *testing.T) {
	_, m := generateFixture(t, nil)
	tests := []struct {
		at   Location
		want string
	}{
		{Location{File: "schemas/tools/get_widget.input.json"}, "GetWidgetInput"},
		{Location{File: "schemas/tools/get_widget.input.json", Pointer: "/properties/options"}, "GetWidgetInputOptions"},
		{Location{File: "schemas/tools/get_widget.output.json", Pointer: "/properties/parts/items"}, "GetWidgetOutputPart"},
		{Location{File: "schemas/tools/get_widget.input.json", Pointer: "/$defs/filter"}, "GetWidgetInputFilter"},
		{Location{File: "schemas/defs/page.json"}, "Page"},
		{Location{File: "schemas/defs/error.json"}, "ToolError"},
		{Location{File: "schemas/defs/error.json", Pointer: "/properties/code"}, "ErrorCode"},
		{Location{File: "schemas/defs/shared.json", Pointer: "/$defs/window"}, "Window"},
		{Location{File: "schemas/tools/x.output.json", Pointer: "/properties/labels/additionalProperties"}, "XOutputLabelsValue"},
	}
	for _, tc := range tests {
		if got := m.TypeName(tc.at); got != tc.want {
			t.Errorf("TypeName(%s) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestEnumConstantsAgreeWithGoJSONSchema(t *testing.T) {
	out, m := generateFixture(t, nil)
	src := string(out.Gen["types_gen.go"])
	for _, ty := range m.Types() {
		for _, v := range ty.EnumValues {
			name := m.EnumConstName(ty, v)
			if !containsWord(src, name) {
				t.Errorf("types_gen.go does not declare %s for %s %q", name, ty.Name, v)
			}
		}
	}
}

// containsWord reports whether src holds name as a whole identifier at the start of a line
// (a declaration), after a tab.
func containsWord(src, name string) bool {
	for _, prefix := range []string{"\n\t" + name + " ", "\n" + name + " "} {
		if strings.Contains(src, prefix) {
			return true
		}
	}
	return false
}
