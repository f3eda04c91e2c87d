package telemetry_test

import (
	"encoding/json"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry"
)

func TestQueryDefaultsAreTheToolSchemasDefaults(t *testing.T) {
	tests := []struct {
		name string
		tool string
		got  int
	}{
		{"a runs query pages like list_runs", gen.ToolListRuns, telemetry.DefaultRunsLimit},
		{"a performance query keeps analyze_service_performance's top operations", gen.ToolAnalyzeServicePerformance, telemetry.DefaultPerformanceTopN},
		{"a database query keeps analyze_db_bottlenecks' operations", gen.ToolAnalyzeDBBottlenecks, telemetry.DefaultDBTopN},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool, ok := gen.Lookup(tc.tool)
			if !ok {
				t.Fatalf("no tool %s", tc.tool)
			}
			var s struct {
				Properties struct {
					Limit struct {
						Default *int `json:"default"`
					} `json:"limit"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(tool.InputSchema, &s); err != nil || s.Properties.Limit.Default == nil {
				t.Fatalf("%s input schema has no limit default (%v)", tc.tool, err)
			}
			if want := *s.Properties.Limit.Default; tc.got != want {
				t.Errorf("default %d, want the schema's %d", tc.got, want)
			}
		})
	}
}
