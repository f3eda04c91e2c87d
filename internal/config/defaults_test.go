package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSchemaDescriptionsQuoteTheDefaults keeps the documented defaults (the schema is what
// editors show) in step with the values the code applies.
func TestSchemaDescriptionsQuoteTheDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "config.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path []string
		want string
	}{
		{[]string{"receiver", "address"}, "default " + DefaultReceiverAddress},
		{[]string{"receiver", "grpcAddress"}, "default " + DefaultGRPCAddress},
		{[]string{"store", "path"}, "default " + DefaultStorePath},
		{[]string{"store", "retention"}, "default 24h"},
		{[]string{"store", "maxBytes"}, "default " + strconv.FormatInt(DefaultStoreMaxBytes, 10)},
		{[]string{"docs", "root"}, "default " + DefaultDocsRoot},
		{[]string{"telemetry", "clickhouse", "tracesTable"}, "default " + DefaultTracesTable},
		{[]string{"telemetry", "clickhouse", "logsTable"}, "default " + DefaultLogsTable},
		{[]string{"commands", "defaultTimeoutMs"}, "default " + strconv.FormatInt(DefaultCommandTimeout.Milliseconds(), 10)},
		{[]string{"commands", "maxTimeoutMs"}, "default " + strconv.FormatInt(DefaultMaxTimeout.Milliseconds(), 10)},
		{[]string{"commands", "outputTailBytes"}, "default " + strconv.Itoa(DefaultOutputTailBytes)},
		{[]string{"commands", "telemetryGraceMs"}, "default " + strconv.FormatInt(DefaultTelemetryGrace.Milliseconds(), 10)},
		{[]string{"commands", "secretEnv"}, strings.Join(DefaultSecretEnv, ", ")},
		{[]string{"budgets", "standard"}, "default " + strconv.Itoa(DefaultBudgetStandard)},
		{[]string{"budgets", "large"}, "default " + strconv.Itoa(DefaultBudgetLarge)},
		{[]string{"budgets", "summary"}, "default " + strconv.Itoa(DefaultBudgetSummary)},
		{[]string{"budgets", "fullCeiling"}, "default " + strconv.Itoa(DefaultFullCeiling)},
		{[]string{"conventions"}, DefaultPreset + " (OpenTelemetry semantic conventions, default)"},
		{[]string{"mcp", "profile"}, DefaultProfile + " (the 13 named tools, default)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.path, "."), func(t *testing.T) {
			node := schema
			for _, p := range tt.path {
				props, _ := node["properties"].(map[string]any)
				node, _ = props[p].(map[string]any)
				if node == nil {
					t.Fatalf("schema has no property %s", strings.Join(tt.path, "."))
				}
			}
			desc, _ := node["description"].(string)
			if !strings.Contains(desc, tt.want) {
				t.Errorf("description %q does not mention %q", desc, tt.want)
			}
		})
	}
}
