// Package config loads the project configuration: the runlens.json file at the project root,
// validated against schemas/config.schema.json, then the RUNLENS_* environment, then flags.
// Later layers win, so a developer can try a different source without editing the shared file.
package config

import (
	"encoding/json"
	"time"
)

// FileName is the configuration file runlens looks for at the project root. JSON was chosen so
// that the published schema validates it in any editor without plugins, and so the same
// validator that checks tool arguments checks it too.
const FileName = "runlens.json"

// Config is the effective configuration after defaults, file, environment and flags. Paths are
// absolute; durations are parsed; lists carry the built-in entries the documentation promises.
type Config struct {
	// ProjectRoot is the absolute project folder every relative path is resolved against.
	ProjectRoot string
	// File is the absolute path of the configuration file that was read, or "" when the
	// project has none and only defaults apply.
	File string
	// FileProblems are the problems of File when it was loaded leniently (LoadLenient,
	// LoadWithoutFile) and left out for them: the rest of the configuration is then the
	// defaults under the environment and flags. Nil when the file was applied.
	FileProblems Errors
	// LogLevel is debug, info, warn or error; it comes only from the environment or a flag.
	LogLevel string

	Telemetry     Telemetry
	Receiver      Receiver
	Store         Store
	Docs          Docs
	Commands      Commands
	Budgets       Budgets
	Conventions   Conventions
	SensitiveKeys []string
	Doctor        Doctor
	MCP           MCP
}

// Telemetry says where the telemetry tools read from.
type Telemetry struct {
	// Source is the parsed telemetry source.
	Source Source
	// SourceOrigin says where Source was chosen ("flag --telemetry", "environment variable
	// RUNLENS_TELEMETRY", "runlens.json telemetry.source"), for messages; "" when the source is
	// the embedded store by default.
	SourceOrigin string
	// APIKeyEnv names the environment variable holding the source's key, so the key itself
	// never sits in a file that is committed.
	APIKeyEnv string
	// PasswordEnv names the environment variable holding the ClickHouse user's password
	// (apiKeyEnv serves when it is not set).
	PasswordEnv string
	// TokenEnv names the environment variable holding an Aspire dashboard login token, which
	// the adapter exchanges for an API key; "" when none is configured.
	TokenEnv string
	// TracesTable and LogsTable are the ClickHouse exporter's table names.
	TracesTable string
	LogsTable   string
	// StackSnippetDeny lists .gitignore-style patterns of project files whose lines are never
	// shown beside a stack location, on top of the .gitignore and the secret files.
	StackSnippetDeny []string
}

// Receiver configures the built-in OTLP receivers, OTLP/HTTP and OTLP/gRPC.
type Receiver struct {
	// Address is the host:port the OTLP/HTTP receiver listens on.
	Address string
	// Enabled is false when the receiver was turned off (RUNLENS_RECEIVER=off, --receiver off,
	// or "enabled": false).
	Enabled bool
	// GRPCAddress is the host:port the OTLP/gRPC receiver listens on.
	GRPCAddress string
	// GRPCEnabled is false when the gRPC receiver was turned off: by its own setting
	// (RUNLENS_RECEIVER_GRPC=off, --receiver-grpc off, "grpcAddress": "off"), or by turning the
	// receiver off in a layer at or above the last one that named a gRPC address.
	GRPCEnabled bool
	// AllowedHosts are the host names accepted in Host and Origin besides the loopback ones.
	AllowedHosts []string
	// Detached is true when runlens serve runs the receivers as a detached runlens collect
	// shared by every session of the store, rather than in the session itself.
	Detached bool
}

// Store configures the embedded SQLite store.
type Store struct {
	// Path is the absolute path of the database file. A sqlite telemetry source names it
	// too: the store the tools read is the store the receiver writes.
	Path string
	// MustExist is true when a sqlite:PATH source other than the default named the file: it
	// is read as it is, so a mistyped path is an error rather than a new, empty store. The
	// default path, store.path and --store name where the receiver writes, and may be created.
	MustExist bool
	// Retention is how long telemetry is kept.
	Retention time.Duration
	// MaxBytes is the size above which the oldest telemetry is pruned.
	MaxBytes int64
}

// Docs configures the Markdown corpus.
type Docs struct {
	// Root is the absolute docs folder.
	Root string
	// Exclude holds glob patterns relative to Root.
	Exclude []string
	// Configured is true when runlens.json names the docs root: a project that did not is
	// not expected to have docs.
	Configured bool
}

// Commands configures the command catalog, its policy and the executor.
type Commands struct {
	// Catalog holds the declared commands in file order.
	Catalog []CatalogEntry
	// DiscoverMakefile and DiscoverPackageJSON extend the catalog with project targets.
	DiscoverMakefile    bool
	DiscoverPackageJSON bool
	// Allow and Deny are the ordered policy rules.
	Allow []Rule
	Deny  []Rule
	// DefaultTimeout applies when neither the call nor the catalog entry sets one.
	DefaultTimeout time.Duration
	// MaxTimeout caps every timeout.
	MaxTimeout time.Duration
	// SecretEnv lists the variable names or patterns removed from a command's environment:
	// the built-in list, the telemetry APIKeyEnv, then the file's entries.
	SecretEnv []string
	// OutputTailBytes is how many of the newest output bytes are kept.
	OutputTailBytes int
	// TelemetryGrace is how long execute_command waits after a command ends for its
	// telemetry to arrive; zero answers at once.
	TelemetryGrace time.Duration
}

// CatalogEntry is one declared command.
type CatalogEntry struct {
	Path        string
	Argv        []string
	Description string
	Usage       string
	// Timeout is zero when the entry declares none.
	Timeout time.Duration
	// NoTelemetry leaves the command's OpenTelemetry environment alone ("telemetry": false).
	NoTelemetry bool
}

// Rule is one policy rule: its name, the tokens a command must begin with (an allow rule) or
// contain (a deny rule, see commands.Rule), and, for a deny rule, flags of which any one denies.
type Rule struct {
	Name   string
	Prefix []string
	Flags  []string
}

// Budgets are the byte ceilings of serialized answers.
type Budgets struct {
	Standard    int
	Large       int
	Summary     int
	FullCeiling int
}

// Conventions selects how telemetry is interpreted.
type Conventions struct {
	// Preset is otel or netscript, as the document names it.
	Preset string
	// Document is the file's "conventions" object, already valid against
	// conventions.schema.json, for the telemetry conventions loader (which owns its meaning);
	// nil when the file has none, meaning the preset alone.
	Document json.RawMessage
}

// Doctor configures the doctor tool.
type Doctor struct {
	// AllowRemoteEndpoints lets the endpoint input reach beyond loopback.
	AllowRemoteEndpoints bool
}

// MCP configures the server itself.
type MCP struct {
	// Profile is full or compact.
	Profile string
}
