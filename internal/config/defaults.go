package config

import (
	"path/filepath"
	"time"

	"github.com/runlens/runlens/internal/secretenv"
)

// The documented defaults, in one place. The schema descriptions and the README quote them;
// a test checks the schema text against these values so the two cannot drift.
const (
	DefaultReceiverAddress = "127.0.0.1:4318"
	DefaultGRPCAddress     = "127.0.0.1:4317"
	DefaultStorePath       = ".runlens/telemetry.db"
	DefaultRetention       = 24 * time.Hour
	DefaultStoreMaxBytes   = int64(1) << 30
	DefaultDocsRoot        = "docs"
	DefaultTracesTable     = "otel_traces"
	DefaultLogsTable       = "otel_logs"
	DefaultCommandTimeout  = 60 * time.Second
	DefaultMaxTimeout      = 10 * time.Minute
	DefaultOutputTailBytes = 16 << 10
	DefaultTelemetryGrace  = 3 * time.Second
	DefaultBudgetStandard  = 16 << 10
	DefaultBudgetLarge     = 32 << 10
	DefaultBudgetSummary   = 4 << 10
	DefaultFullCeiling     = 8 << 20
	DefaultPreset          = "otel"
	DefaultProfile         = "full"
	DefaultLogLevel        = "info"
)

// AlwaysSecretEnv is removed from every executed command's environment whatever the
// configuration says: runlens's own settings may carry credentials (a RUNLENS_TELEMETRY URL
// with a password).
const AlwaysSecretEnv = secretenv.OwnPrefix + "*"

// DefaultSecretEnv is the secretEnv list of a configuration that sets none: the names
// credentials conventionally use, and those the common CI systems give their secrets (see
// secretenv.DefaultPatterns). A file that sets secretEnv replaces it, so a project whose
// migrations need PGPASSWORD can keep it; the redactor still scrubs the values of both lists.
// A leading or trailing * matches any run of characters.
var DefaultSecretEnv = secretenv.DefaultPatterns()

// Defaults returns the configuration a project without runlens.json gets, rooted at root.
func Defaults(root string) *Config {
	store := filepath.Join(root, DefaultStorePath)
	return &Config{
		ProjectRoot: root,
		LogLevel:    DefaultLogLevel,
		Telemetry: Telemetry{
			Source:      Source{Kind: SourceSQLite, Path: store},
			TracesTable: DefaultTracesTable,
			LogsTable:   DefaultLogsTable,
		},
		Receiver: Receiver{Address: DefaultReceiverAddress, Enabled: true, GRPCAddress: DefaultGRPCAddress, GRPCEnabled: true, Detached: true},
		Store:    Store{Path: store, Retention: DefaultRetention, MaxBytes: DefaultStoreMaxBytes},
		Docs:     Docs{Root: filepath.Join(root, DefaultDocsRoot)},
		Commands: Commands{
			DefaultTimeout:  DefaultCommandTimeout,
			MaxTimeout:      DefaultMaxTimeout,
			SecretEnv:       append([]string{AlwaysSecretEnv}, DefaultSecretEnv...),
			OutputTailBytes: DefaultOutputTailBytes,
			TelemetryGrace:  DefaultTelemetryGrace,
		},
		Budgets: Budgets{
			Standard:    DefaultBudgetStandard,
			Large:       DefaultBudgetLarge,
			Summary:     DefaultBudgetSummary,
			FullCeiling: DefaultFullCeiling,
		},
		Conventions: Conventions{Preset: DefaultPreset},
		MCP:         MCP{Profile: DefaultProfile},
	}
}
