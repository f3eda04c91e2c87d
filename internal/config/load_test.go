package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testLoader is the loader the binary uses: the generated validator of the published schema.
func testLoader(testing.TB) *Loader { return embedded }

// project makes a project folder holding runlens.json with the given content ("" = no file).
func project(t *testing.T, content string) string {
	t.Helper()
	root := t.TempDir()
	if content != "" {
		if err := os.WriteFile(filepath.Join(root, FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestMissingFileMeansDefaults(t *testing.T) {
	root := project(t, "")
	cfg, err := testLoader(t).Load(root, nil, Overrides{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Defaults(root)
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config without a file differs from the defaults:\n got %+v\nwant %+v", cfg, want)
	}
	if cfg.File != "" {
		t.Errorf("File = %q, want empty when there is no file", cfg.File)
	}
	if cfg.Telemetry.Source.Kind != SourceSQLite || cfg.Telemetry.Source.Path != filepath.Join(root, ".runlens", "telemetry.db") {
		t.Errorf("default source = %+v, want the embedded store under .runlens", cfg.Telemetry.Source)
	}
	if !cfg.Receiver.Enabled || cfg.Receiver.Address != "127.0.0.1:4318" || !cfg.Receiver.GRPCEnabled || cfg.Receiver.GRPCAddress != "127.0.0.1:4317" {
		t.Errorf("default receiver = %+v, want enabled on 127.0.0.1:4318 and gRPC on 127.0.0.1:4317", cfg.Receiver)
	}
}

// The gRPC receiver has its own address and off switch; turning the receiver off turns both
// protocols off, unless a gRPC address is named in the same or a later layer.
func TestTheGRPCReceiverIsTurnedOnAndOffWithTheReceiver(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		flags    Overrides
		wantHTTP bool
		wantGRPC string // "" when off
	}{
		{name: "both receivers are on by default", wantHTTP: true, wantGRPC: "127.0.0.1:4317"},
		{name: "the file moves the gRPC receiver", file: `{"receiver": {"grpcAddress": "127.0.0.1:5317"}}`, wantHTTP: true, wantGRPC: "127.0.0.1:5317"},
		{name: "the file turns only gRPC off", file: `{"receiver": {"grpcAddress": "off"}}`, wantHTTP: true},
		{name: "a disabled receiver in the file turns both off", file: `{"receiver": {"enabled": false}}`},
		{name: "a disabled receiver with a gRPC address in the file keeps gRPC", file: `{"receiver": {"enabled": false, "grpcAddress": "127.0.0.1:5317"}}`, wantGRPC: "127.0.0.1:5317"},
		{name: "--receiver off turns both off", flags: Overrides{Receiver: "off"}},
		{name: "--receiver off with --receiver-grpc keeps gRPC only", flags: Overrides{Receiver: "off", ReceiverGRPC: "127.0.0.1:5317"}, wantGRPC: "127.0.0.1:5317"},
		{name: "--receiver-grpc off turns only gRPC off", flags: Overrides{ReceiverGRPC: "off"}, wantHTTP: true},
		{name: "RUNLENS_RECEIVER_GRPC moves the gRPC receiver", env: map[string]string{EnvReceiverGRPC: "127.0.0.1:6317"}, wantHTTP: true, wantGRPC: "127.0.0.1:6317"},
		{name: "--receiver-grpc wins over RUNLENS_RECEIVER_GRPC", env: map[string]string{EnvReceiverGRPC: "off"}, flags: Overrides{ReceiverGRPC: "127.0.0.1:7317"}, wantHTTP: true, wantGRPC: "127.0.0.1:7317"},
		{name: "RUNLENS_RECEIVER=off overrides a gRPC address in the file", file: `{"receiver": {"grpcAddress": "127.0.0.1:5317"}}`, env: map[string]string{EnvReceiver: "off"}},
		{name: "a gRPC flag re-enables gRPC under RUNLENS_RECEIVER=off", env: map[string]string{EnvReceiver: "off"}, flags: Overrides{ReceiverGRPC: "127.0.0.1:5317"}, wantGRPC: "127.0.0.1:5317"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := testLoader(t).Load(project(t, tt.file), envOf(tt.env), tt.flags)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			r := cfg.Receiver
			if r.Enabled != tt.wantHTTP {
				t.Errorf("HTTP receiver enabled %v, want %v", r.Enabled, tt.wantHTTP)
			}
			if got := map[bool]string{true: r.GRPCAddress}[r.GRPCEnabled]; got != tt.wantGRPC {
				t.Errorf("gRPC receiver %q (enabled %v), want %q", r.GRPCAddress, r.GRPCEnabled, tt.wantGRPC)
			}
		})
	}
}

func TestEveryFileKeyIsApplied(t *testing.T) {
	root := project(t, `{
  "$schema": "https://runlens.dev/schemas/config.schema.json",
  "telemetry": {"source": "aspire+http://localhost:18888", "apiKeyEnv": "ASPIRE_KEY", "passwordEnv": "CH_PASSWORD", "stackSnippetDeny": ["internal/secrets/**"],
                "clickhouse": {"tracesTable": "t", "logsTable": "l"}},
  "receiver": {"address": "127.0.0.1:4319", "enabled": false, "allowedHosts": ["otel.internal"], "detached": false},
  "store": {"path": "var/store.db", "retention": "2d", "maxBytes": 2097152},
  "docs": {"root": "site", "exclude": ["drafts/**"]},
  "commands": {
    "catalog": [{"path": "db migrate", "argv": ["./bin/migrate", "up"], "description": "Migrate.", "usage": "db migrate", "timeoutMs": 5000}],
    "discover": {"makefile": true, "packageJson": true},
    "policy": {"allow": [{"name": "db", "prefix": ["db"]}], "deny": [{"name": "no-reset", "prefix": ["db", "reset"]}]},
    "defaultTimeoutMs": 1000, "maxTimeoutMs": 2000,
    "secretEnv": ["STRIPE_*"],
    "outputTailBytes": 4096, "telemetryGraceMs": 250
  },
  "budgets": {"standard": 8192, "large": 16384, "summary": 2048, "fullCeiling": 1048576},
  "conventions": {"preset": "netscript", "defaultDomain": "service"},
  "sensitiveKeys": ["x-api-key"],
  "doctor": {"allowRemoteEndpoints": true},
  "mcp": {"profile": "compact"}
}`)
	cfg, err := testLoader(t).Load(root, nil, Overrides{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Config{
		ProjectRoot: root,
		File:        filepath.Join(root, FileName),
		LogLevel:    "info",
		Telemetry: Telemetry{
			Source:           Source{Kind: SourceAspire, Endpoint: "http://localhost:18888"},
			SourceOrigin:     "runlens.json telemetry.source",
			APIKeyEnv:        "ASPIRE_KEY",
			PasswordEnv:      "CH_PASSWORD",
			TracesTable:      "t",
			LogsTable:        "l",
			StackSnippetDeny: []string{"internal/secrets/**"},
		},
		Receiver: Receiver{Address: "127.0.0.1:4319", Enabled: false, GRPCAddress: DefaultGRPCAddress, GRPCEnabled: false, AllowedHosts: []string{"otel.internal"}},
		Store:    Store{Path: filepath.Join(root, "var", "store.db"), Retention: 48 * time.Hour, MaxBytes: 2097152},
		Docs:     Docs{Root: filepath.Join(root, "site"), Exclude: []string{"drafts/**"}, Configured: true},
		Commands: Commands{
			Catalog: []CatalogEntry{{Path: "db migrate", Argv: []string{"./bin/migrate", "up"},
				Description: "Migrate.", Usage: "db migrate", Timeout: 5 * time.Second}},
			DiscoverMakefile:    true,
			DiscoverPackageJSON: true,
			Allow:               []Rule{{Name: "db", Prefix: []string{"db"}}},
			Deny:                []Rule{{Name: "no-reset", Prefix: []string{"db", "reset"}}},
			DefaultTimeout:      time.Second,
			MaxTimeout:          2 * time.Second,
			SecretEnv:           []string{"RUNLENS_*", "STRIPE_*", "ASPIRE_KEY", "CH_PASSWORD"},
			OutputTailBytes:     4096,
			TelemetryGrace:      250 * time.Millisecond,
		},
		Budgets:       Budgets{Standard: 8192, Large: 16384, Summary: 2048, FullCeiling: 1048576},
		Conventions:   Conventions{Preset: "netscript", Document: []byte(`{"defaultDomain":"service","preset":"netscript"}`)},
		SensitiveKeys: []string{"x-api-key"},
		Doctor:        Doctor{AllowRemoteEndpoints: true},
		MCP:           MCP{Profile: "compact"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("applied config differs:\n got %+v\nwant %+v", cfg, want)
	}
}

func TestLaterLayersWin(t *testing.T) {
	file := `{"telemetry": {"source": "sqlite:file.db"}, "mcp": {"profile": "compact"},
	          "receiver": {"address": "127.0.0.1:1111", "grpcAddress": "127.0.0.1:1112", "detached": false}}`
	tests := []struct {
		name         string
		env          map[string]string
		flags        Overrides
		wantSource   string
		wantProfile  string
		wantReceiver Receiver
		wantLogLevel string
	}{
		{
			name:         "the file wins over the defaults",
			wantSource:   "file.db",
			wantProfile:  "compact",
			wantReceiver: Receiver{Address: "127.0.0.1:1111", Enabled: true, GRPCAddress: "127.0.0.1:1112", GRPCEnabled: true},
			wantLogLevel: "info",
		},
		{
			name: "the environment wins over the file",
			env: map[string]string{EnvTelemetry: "sqlite:env.db", EnvProfile: "full",
				EnvReceiver: "off", EnvLogLevel: "debug", EnvDetached: "true"},
			wantSource:   "env.db",
			wantProfile:  "full",
			wantReceiver: Receiver{Address: "127.0.0.1:1111", Enabled: false, GRPCAddress: "127.0.0.1:1112", GRPCEnabled: false, Detached: true},
			wantLogLevel: "debug",
		},
		{
			name: "flags win over the environment",
			env: map[string]string{EnvTelemetry: "sqlite:env.db", EnvProfile: "full",
				EnvReceiver: "off", EnvLogLevel: "debug", EnvDetached: "0"},
			flags:        Overrides{Telemetry: "sqlite:flag.db", Profile: "compact", Receiver: "127.0.0.1:2222", LogLevel: "error"},
			wantSource:   "flag.db",
			wantProfile:  "compact",
			wantReceiver: Receiver{Address: "127.0.0.1:2222", Enabled: true, GRPCAddress: "127.0.0.1:1112", GRPCEnabled: false, Detached: false},
			wantLogLevel: "error",
		},
		{
			name:         "an empty environment value counts as unset",
			env:          map[string]string{EnvTelemetry: "", EnvProfile: ""},
			wantSource:   "file.db",
			wantProfile:  "compact",
			wantReceiver: Receiver{Address: "127.0.0.1:1111", Enabled: true, GRPCAddress: "127.0.0.1:1112", GRPCEnabled: true},
			wantLogLevel: "info",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, file)
			cfg, err := testLoader(t).Load(root, envOf(tt.env), tt.flags)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got, want := cfg.Telemetry.Source.Path, filepath.Join(root, tt.wantSource); got != want {
				t.Errorf("source path = %q, want %q", got, want)
			}
			if cfg.MCP.Profile != tt.wantProfile {
				t.Errorf("profile = %q, want %q", cfg.MCP.Profile, tt.wantProfile)
			}
			if !reflect.DeepEqual(cfg.Receiver, tt.wantReceiver) {
				t.Errorf("receiver = %+v, want %+v", cfg.Receiver, tt.wantReceiver)
			}
			if cfg.LogLevel != tt.wantLogLevel {
				t.Errorf("log level = %q, want %q", cfg.LogLevel, tt.wantLogLevel)
			}
		})
	}
}

func TestProjectRootComesFromFlagThenEnvironmentThenArgument(t *testing.T) {
	arg, env, flag := project(t, ""), project(t, ""), project(t, "")
	tests := []struct {
		name  string
		env   map[string]string
		flags Overrides
		want  string
	}{
		{"the argument is the fallback", nil, Overrides{}, arg},
		{"the environment replaces the argument", map[string]string{EnvProjectRoot: env}, Overrides{}, env},
		{"the flag replaces the environment", map[string]string{EnvProjectRoot: env}, Overrides{ProjectRoot: flag}, flag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := testLoader(t).Load(arg, envOf(tt.env), tt.flags)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.ProjectRoot != tt.want {
				t.Errorf("ProjectRoot = %q, want %q", cfg.ProjectRoot, tt.want)
			}
		})
	}
}

func TestStoreFlagMovesTheDefaultSource(t *testing.T) {
	root := project(t, "")
	cfg, err := testLoader(t).Load(root, nil, Overrides{Store: "other.db"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := filepath.Join(root, "other.db")
	if cfg.Store.Path != want || cfg.Telemetry.Source.Path != want {
		t.Errorf("store %q, source %q; want both %q", cfg.Store.Path, cfg.Telemetry.Source.Path, want)
	}
}

func TestSecretEnvReplacesTheDefaultsButKeepsRunlensVariables(t *testing.T) {
	root := project(t, `{"commands": {"secretEnv": []}}`)
	cfg, err := testLoader(t).Load(root, nil, Overrides{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(cfg.Commands.SecretEnv, []string{"RUNLENS_*"}) {
		t.Errorf("SecretEnv = %q, want only RUNLENS_*", cfg.Commands.SecretEnv)
	}
}

// wantError is what one reported problem must say.
type wantError struct {
	origin     string // suffix of Origin
	pointer    string
	line, col  int
	problem    string // substring
	fix        string // substring
	notProblem string // must not appear anywhere in the message
}

func TestProblemsAreReportedPrecisely(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags Overrides
		want  wantError
	}{
		{
			name: "an unknown key names the key and suggests the closest known one",
			file: "{\n  \"comands\": {}\n}",
			want: wantError{origin: FileName, pointer: "/comands", line: 2, col: 3,
				problem: `unknown key "comands"`, fix: `did you mean "commands"?`},
		},
		{
			name: "an unknown nested key lists the keys allowed there",
			file: "{\"receiver\": {\n\t\"port\": 4318}}",
			want: wantError{origin: FileName, pointer: "/receiver/port", line: 2, col: 2,
				problem: `unknown key "port"`, fix: "address, allowedHosts, detached, enabled"},
		},
		{
			name: "a wrong type says what was expected and what was found",
			file: "{\n  \"receiver\": {\"enabled\": \"yes\"}\n}",
			want: wantError{origin: FileName, pointer: "/receiver/enabled", line: 2, col: 16,
				problem: "expected boolean, got string", fix: "hosts the receiver"},
		},
		{
			name: "a wrong type inside an array item is located at the item",
			file: "{\"commands\": {\"policy\": {\"allow\": [\n  {\"name\": \"t\", \"prefix\": \"test\"}\n]}}}",
			want: wantError{origin: FileName, pointer: "/commands/policy/allow/0/prefix", line: 2, col: 17,
				problem: "expected array, got string", fix: "tokens the command must begin with"},
		},
		{
			name: "a bad enum lists the allowed values",
			file: `{"mcp": {"profile": "tiny"}}`,
			want: wantError{origin: FileName, pointer: "/mcp/profile", line: 1, col: 10,
				problem: `expected one of "full", "compact", got "tiny"`, fix: `use one of "full", "compact"`},
		},
		{
			name: "invalid JSON is located by line and column",
			file: "{\n  \"mcp\": {\"profile\": \"full\",}\n}",
			want: wantError{origin: FileName, line: 2, col: 29, problem: "invalid JSON", fix: "syntax"},
		},
		{
			name: "a truncated file is located at its end",
			file: "{\n  \"mcp\": {",
			want: wantError{origin: FileName, line: 2, col: 11, problem: "unexpected end of JSON input"},
		},
		{
			name: "content after the top-level value is an error",
			file: "{}\n{}",
			want: wantError{origin: FileName, line: 2, col: 1, problem: "after the top-level JSON value"},
		},
		{
			name: "a missing required key names the key and what it is for",
			file: `{"commands": {"catalog": [{"path": "test"}]}}`,
			want: wantError{origin: FileName, pointer: "/commands/catalog/0/argv",
				problem: `missing required key "argv"`, fix: "run without a shell"},
		},
		{
			name: "a key given twice is reported at its second occurrence",
			file: "{\"mcp\": {},\n \"mcp\": {}}",
			want: wantError{origin: FileName, pointer: "/mcp", line: 2, col: 2, problem: "more than once"},
		},
		{
			name: "a duplicate catalog path points at the second entry",
			file: `{"commands": {"catalog": [{"path": "test", "argv": ["go"]}, {"path": "test", "argv": ["go"]}]}}`,
			want: wantError{origin: FileName, pointer: "/commands/catalog/1/path", problem: "already declared at /commands/catalog/0"},
		},
		{
			name: "a malformed source is rejected without echoing a password",
			file: `{"telemetry": {"source": "postgres://user:hunter2@db"}}`,
			want: wantError{origin: FileName, pointer: "/telemetry/source", problem: "expected form",
				fix: "sqlite:PATH", notProblem: "hunter2"},
		},
		{
			name: "the conventions section is checked against the conventions schema",
			file: `{"conventions": {"preset": "otel", "executionIdKeys": "run.id"}}`,
			want: wantError{origin: FileName, pointer: "/conventions/executionIdKeys", problem: "expected array, got string", fix: "identify a run"},
		},
		{
			name: "an unknown conventions key is named",
			file: `{"conventions": {"overrides": {}}}`,
			want: wantError{origin: FileName, pointer: "/conventions/overrides", problem: `unknown key "overrides"`, fix: "executionIdKeys"},
		},
		{
			name: "a number out of range gives the bound",
			file: `{"commands": {"outputTailBytes": 10}}`,
			want: wantError{origin: FileName, pointer: "/commands/outputTailBytes", problem: "minimum", fix: "newest bytes"},
		},
		{
			name: "a root that is not an object is reported at the root",
			file: `[]`,
			want: wantError{origin: FileName, line: 1, col: 1, problem: "expected object, got array"},
		},
		{
			name: "a default timeout above the ceiling is reported",
			file: `{"commands": {"defaultTimeoutMs": 5000, "maxTimeoutMs": 1000}}`,
			want: wantError{origin: FileName, pointer: "/commands/defaultTimeoutMs", problem: "larger than maxTimeoutMs"},
		},
		{
			name: "a bad environment profile names the variable",
			env:  map[string]string{EnvProfile: "tiny"},
			want: wantError{origin: "environment variable RUNLENS_MCP_PROFILE", problem: `expected full or compact, got "tiny"`, fix: "full or compact"},
		},
		{
			name: "a bad environment source names the variable",
			env:  map[string]string{EnvTelemetry: "mysql://x"},
			want: wantError{origin: "environment variable RUNLENS_TELEMETRY", problem: "invalid telemetry source", fix: "clickhouse://"},
		},
		{
			name:  "a bad receiver flag names the flag",
			flags: Overrides{Receiver: "4318"},
			want:  wantError{origin: "flag --receiver", problem: "not host:port", fix: "or off"},
		},
		{
			name:  "a bad gRPC receiver flag names the flag",
			flags: Overrides{ReceiverGRPC: "4317"},
			want:  wantError{origin: "flag --receiver-grpc", problem: "not host:port", fix: "127.0.0.1:4317, or off"},
		},
		{
			name: "a gRPC receiver address without a host is refused in the file",
			file: `{"receiver": {"grpcAddress": ":4317"}}`,
			want: wantError{origin: FileName, pointer: "/receiver/grpcAddress", problem: "every interface"},
		},
		{
			name:  "a receiver without a host is refused",
			flags: Overrides{Receiver: ":4318"},
			want:  wantError{origin: "flag --receiver", problem: "every interface"},
		},
		{
			name:  "a bad log level names the flag",
			flags: Overrides{LogLevel: "loud"},
			want:  wantError{origin: "flag --log-level", problem: "expected debug, info, warn or error"},
		},
		{
			name:  "a project root that does not exist is reported",
			flags: Overrides{ProjectRoot: "/definitely/not/here"},
			want:  wantError{origin: "flag --project-root", problem: "is not a folder"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, tt.file)
			cfg, err := testLoader(t).Load(root, envOf(tt.env), tt.flags)
			if err == nil {
				t.Fatalf("Load succeeded with %+v, want an error", cfg)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not a *config.Error", err, err)
			}
			checkError(t, e, tt.want)
		})
	}
}

func checkError(t *testing.T, e *Error, w wantError) {
	t.Helper()
	if !strings.HasSuffix(e.Origin, w.origin) {
		t.Errorf("Origin = %q, want it to end with %q", e.Origin, w.origin)
	}
	if e.Pointer != w.pointer {
		t.Errorf("Pointer = %q, want %q", e.Pointer, w.pointer)
	}
	if w.line != 0 && (e.Line != w.line || e.Column != w.col) {
		t.Errorf("position = %d:%d, want %d:%d", e.Line, e.Column, w.line, w.col)
	}
	if !strings.Contains(e.Problem, w.problem) {
		t.Errorf("Problem = %q, want it to contain %q", e.Problem, w.problem)
	}
	if !strings.Contains(e.Fix, w.fix) {
		t.Errorf("Fix = %q, want it to contain %q", e.Fix, w.fix)
	}
	if w.notProblem != "" && strings.Contains(e.Error(), w.notProblem) {
		t.Errorf("message %q must not contain %q", e.Error(), w.notProblem)
	}
}

func TestEveryProblemIsReportedInOnePass(t *testing.T) {
	root := project(t, `{"mcp": {"profile": "tiny"}, "docs": {"rot": "x"}, "receiver": {"enabled": 1}}`)
	_, err := testLoader(t).Load(root, nil, Overrides{})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v (%T) is not config.Errors", err, err)
	}
	if len(errs) != 3 {
		t.Fatalf("got %d problems, want 3:\n%v", len(errs), err)
	}
	msg := err.Error()
	for _, want := range []string{"/mcp/profile", "/docs/rot", "/receiver/enabled"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %s:\n%s", want, msg)
		}
	}
	if !strings.HasPrefix(msg, filepath.Join(root, FileName)+":1:") {
		t.Errorf("message does not start with file:line: %q", msg)
	}
}

func TestManyProblemsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"sensitiveKeys": [`)
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("1")
	}
	b.WriteString("]}")
	_, err := testLoader(t).Load(project(t, b.String()), nil, Overrides{})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v is not config.Errors", err)
	}
	if len(errs) != maxErrors {
		t.Fatalf("got %d problems, want %d", len(errs), maxErrors)
	}
	if last := errs[len(errs)-1]; !strings.Contains(last.Problem, "21 more problems") {
		t.Errorf("last problem = %q, want a count of the rest", last.Problem)
	}
}

func TestCheckValidatesBytesWithoutAProject(t *testing.T) {
	l := testLoader(t)
	if err := l.Check("runlens.json", []byte(`{"mcp": {"profile": "full"}}`)); err != nil {
		t.Errorf("Check(valid) = %v", err)
	}
	err := l.Check("runlens.json", []byte(`{"mcp": {"profile": 3}}`))
	if err == nil || !strings.Contains(err.Error(), "runlens.json:1:") {
		t.Errorf("Check(invalid) = %v, want a located error", err)
	}
}

func TestSQLiteSourceAndStorePathNameOneFile(t *testing.T) {
	tests := []struct {
		name          string
		file          string
		env           map[string]string
		flags         Overrides
		wantPath      string // relative to the project root
		wantMustExist bool
		wantOrigin    string
	}{
		{
			name:     "without either setting both are the default file, which may be created",
			wantPath: ".runlens/telemetry.db",
		},
		{
			name:     "the --telemetry flag names the store that is read and written",
			flags:    Overrides{Telemetry: "sqlite:data/custom.db"},
			wantPath: "data/custom.db", wantMustExist: true, wantOrigin: "flag --telemetry",
		},
		{
			name:     "RUNLENS_TELEMETRY names the store that is read and written",
			env:      map[string]string{EnvTelemetry: "sqlite:env.db"},
			wantPath: "env.db", wantMustExist: true, wantOrigin: "environment variable RUNLENS_TELEMETRY",
		},
		{
			name:     "telemetry.source in the file names the store that is read and written",
			file:     `{"telemetry": {"source": "sqlite:file.db"}}`,
			wantPath: "file.db", wantMustExist: true, wantOrigin: "runlens.json telemetry.source",
		},
		{
			name:     "a source in the environment wins over the file's store.path",
			file:     `{"store": {"path": "file.db"}}`,
			env:      map[string]string{EnvTelemetry: "sqlite:env.db"},
			wantPath: "env.db", wantMustExist: true, wantOrigin: "environment variable RUNLENS_TELEMETRY",
		},
		{
			name:     "a --store flag wins over a source in the environment and may be created",
			env:      map[string]string{EnvTelemetry: "sqlite:env.db"},
			flags:    Overrides{Store: "flag.db"},
			wantPath: "flag.db",
		},
		{
			name:     "store.path alone moves the source and may be created",
			file:     `{"store": {"path": "var/store.db"}}`,
			wantPath: "var/store.db",
		},
		{
			name:       "a source naming the default file may still be created",
			flags:      Overrides{Telemetry: "sqlite:.runlens/telemetry.db"},
			wantPath:   ".runlens/telemetry.db",
			wantOrigin: "flag --telemetry",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, tt.file)
			cfg, err := testLoader(t).Load(root, envOf(tt.env), tt.flags)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := filepath.Join(root, filepath.FromSlash(tt.wantPath))
			if cfg.Store.Path != want || cfg.Telemetry.Source.Path != want || cfg.Telemetry.Source.Kind != SourceSQLite {
				t.Errorf("store %q, source %+v; want both %q", cfg.Store.Path, cfg.Telemetry.Source, want)
			}
			if cfg.Store.MustExist != tt.wantMustExist {
				t.Errorf("MustExist = %v, want %v", cfg.Store.MustExist, tt.wantMustExist)
			}
			if cfg.Telemetry.SourceOrigin != tt.wantOrigin {
				t.Errorf("SourceOrigin = %q, want %q", cfg.Telemetry.SourceOrigin, tt.wantOrigin)
			}
		})
	}
}

func TestAFileNamingTwoDifferentStoresIsAnError(t *testing.T) {
	root := project(t, "{\"telemetry\": {\"source\": \"sqlite:a.db\"},\n \"store\": {\"path\": \"b.db\"}}")
	_, err := testLoader(t).Load(root, nil, Overrides{})
	var e *Error
	if !errors.As(err, &e) || e.Pointer != "/store/path" || e.Line != 2 || !strings.Contains(e.Problem, "two different files") {
		t.Fatalf("Load error = %v, want /store/path at line 2 naming two different files", err)
	}
}

func TestLenientLoadLeavesABrokenFileOutAndKeepsItsProblems(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		wantPointer string
		wantLine    int
		wantCol     int
		wantProblem string
	}{
		{
			name:     "invalid JSON is kept with its line and column",
			file:     "{\n  \"docs\": {\"root\": \"site\",}\n}",
			wantLine: 2, wantCol: 27, wantProblem: "invalid JSON",
		},
		{
			name:        "a key the schema does not know is kept with its pointer and position",
			file:        "{\n  \"docs\": {\"rooot\": \"site\"}\n}",
			wantPointer: "/docs/rooot", wantLine: 2, wantCol: 12, wantProblem: `unknown key "rooot"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, tt.file)
			cfg, err := testLoader(t).LoadLenient(root, envOf(map[string]string{EnvProfile: "compact"}), Overrides{Receiver: "127.0.0.1:9"})
			if err != nil {
				t.Fatalf("LoadLenient: %v", err)
			}
			if len(cfg.FileProblems) == 0 {
				t.Fatal("no FileProblems for a broken file")
			}
			e := cfg.FileProblems[0]
			if e.Pointer != tt.wantPointer || e.Line != tt.wantLine || e.Column != tt.wantCol || !strings.Contains(e.Problem, tt.wantProblem) {
				t.Errorf("problem = %+v, want %s at %d:%d saying %q", e, tt.wantPointer, tt.wantLine, tt.wantCol, tt.wantProblem)
			}
			if got := e.Location(root); got != fmt.Sprintf("runlens.json:%d:%d", tt.wantLine, tt.wantCol) {
				t.Errorf("Location = %q, want the file relative to the project root", got)
			}
			if cfg.File != filepath.Join(root, FileName) || cfg.Docs.Root != filepath.Join(root, DefaultDocsRoot) {
				t.Errorf("file %q, docs root %q; want the file named and its settings left out", cfg.File, cfg.Docs.Root)
			}
			if cfg.MCP.Profile != "compact" || cfg.Receiver.Address != "127.0.0.1:9" {
				t.Errorf("profile %q, receiver %q; want the environment and flags still applied", cfg.MCP.Profile, cfg.Receiver.Address)
			}
		})
	}
}

func TestLenientLoadStillRefusesABadFlagAndAppliesAGoodFile(t *testing.T) {
	root := project(t, `{"docs": {"root": "site"}}`)
	if _, err := testLoader(t).LoadLenient(root, nil, Overrides{Profile: "tiny"}); err == nil {
		t.Error("a bad --profile loaded leniently")
	}
	cfg, err := testLoader(t).LoadLenient(root, nil, Overrides{})
	if err != nil || cfg.FileProblems != nil || cfg.Docs.Root != filepath.Join(root, "site") {
		t.Fatalf("a valid file loaded leniently: %v, problems %v, docs root %q", err, cfg.FileProblems, cfg.Docs.Root)
	}
}

func TestLoadWithoutFileLocatesTheProblemsByPointer(t *testing.T) {
	root := project(t, "{\n  \"conventions\": {\"preset\": \"otel\"}\n}")
	cfg, err := testLoader(t).LoadWithoutFile(root, nil, Overrides{}, Errors{{Origin: filepath.Join(root, FileName), Pointer: "/conventions", Problem: "does not load"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.FileProblems[0]; e.Line != 2 || e.Column != 3 || cfg.Conventions.Document != nil {
		t.Errorf("problem %+v, conventions %s; want it located at 2:3 and the file left out", e, cfg.Conventions.Document)
	}
}
