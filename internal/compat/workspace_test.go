package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspaceFiles is the fixture project every client is pointed at: a few Markdown documents
// (the slugs and sections the tools' valid examples ask for) and a command catalog whose
// policy allows two harmless commands and denies a third. The OTLP receiver is off: telemetry,
// when a test wants it, is seeded beforehand (seededWorkspace).
var workspaceFiles = map[string]string{
	"runlens.json": `{
  "receiver": {"enabled": false},
  "docs": {"root": "docs"},
  "commands": {
    "catalog": [
      {"path": "test", "argv": ["echo", "all tests passed"], "description": "Runs the project's tests.", "usage": "test"},
      {"path": "db migrate", "argv": ["echo", "migrations applied"], "description": "Applies database migrations.", "usage": "db migrate [--dry-run]"},
      {"path": "wipe", "argv": ["echo", "wiped"], "description": "Deletes local data.", "usage": "wipe"}
    ],
    "policy": {
      "allow": [
        {"name": "allow-test", "prefix": ["test"]},
        {"name": "allow-db-migrate", "prefix": ["db", "migrate"]}
      ],
      "deny": [{"name": "deny-wipe", "prefix": ["wipe"]}]
    }
  }
}
`,
	"docs/index.md": `---
title: Handbook
description: How the fixture app is built, run and operated.
---
# Handbook

Start here. The retry policy is described in guides/retries; jobs in reference/jobs.
`,
	"docs/guides/retries.md": `---
title: Retries
description: When and how requests are retried.
---
# Retries

## Retry policy

Outgoing requests are retried three times with exponential backoff and jitter.

## Idempotency

Only idempotent requests are retried; a POST needs an idempotency key.
`,
	"docs/reference/jobs.md": `---
title: Jobs
description: The background jobs and what happens when they fail.
---
# Jobs

## Schedule

The billing job runs every night.

## Failure handling

A failed job is retried once, then reported as an error run.
`,
}

// newWorkspace writes the fixture project into a fresh folder and returns its path; its
// telemetry store is empty (see seededWorkspace for one with telemetry).
func newWorkspace(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := writeWorkspace(root); err != nil {
		t.Fatal(err)
	}
	return root
}

// serveArgs are the arguments of `runlens serve` on a workspace, followed by extra flags.
func serveArgs(root string, extra ...string) []string {
	return append([]string{"serve", "--project-root", root, "--receiver", "off"}, extra...)
}

// serverEnv is the environment a served binary gets: the test's own minus every RUNLENS_*
// variable, so a developer's settings cannot change what the clients see. The gRPC receiver
// is off (RUNLENS_RECEIVER_GRPC=off): its default port would be contended by every serve and
// collect the tests run at once; the tests of the gRPC receiver pass a free port by flag.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RUNLENS_") {
			env = append(env, kv)
		}
	}
	// These sessions host their receivers themselves, as the tests about hosting expect, and
	// leave no detached receiver behind.
	return append(env, "RUNLENS_RECEIVER_GRPC=off", "RUNLENS_RECEIVER_DETACHED=false")
}

// toolCall is one call every client makes, with the answer the fixture workspace leads to.
type toolCall struct {
	label string // unique within the plan: the tool name, or tool/what for extra calls
	tool  string
	args  json.RawMessage
	// wantError is the stable error code of the expected tool error result; "" expects a
	// successful answer.
	wantError string
}

// toolPlan is the full profile's tools in tools/list order, each called with its first valid
// example (schemas/examples/<tool>/valid-input-1.json), which the seeded workspace answers
// successfully, then a call of a command the policy denies.
func toolPlan(t testing.TB) []toolCall {
	t.Helper()
	return append(examplePlan(t, registryTools(t)), deniedCall)
}

// compactPlan is the compact profile's two tools, each called with its first valid example,
// then the denied command through the router.
func compactPlan(t testing.TB) []toolCall {
	t.Helper()
	return append(examplePlan(t, profileTools(t, "compact")), toolCall{
		label:     "runlens/denied",
		tool:      "runlens",
		args:      json.RawMessage(`{"operation":"execute_command","arguments":{"command":"wipe"}}`),
		wantError: "command_denied",
	})
}

// examplePlan calls each tool with its first valid example.
func examplePlan(t testing.TB, tools []string) []toolCall {
	t.Helper()
	root := repoRoot(t)
	var plan []toolCall
	for _, name := range tools {
		args, err := os.ReadFile(filepath.Join(root, "schemas", "examples", name, "valid-input-1.json"))
		if err != nil {
			t.Fatalf("tool %s has no valid input example: %v", name, err)
		}
		plan = append(plan, toolCall{label: name, tool: name, args: compact(t, args)})
	}
	return plan
}

// deniedCall asks for a command the fixture policy denies by name.
var deniedCall = toolCall{
	label:     "execute_command/denied",
	tool:      "execute_command",
	args:      json.RawMessage(`{"command":"wipe"}`),
	wantError: "command_denied",
}

// registryTools lists the full profile's tools in their published order.
func registryTools(t testing.TB) []string {
	t.Helper()
	return profileTools(t, "full")
}

// profileTools lists a profile's tools in their published order (schemas/registry.json).
func profileTools(t testing.TB, profile string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "schemas", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &reg); err != nil {
		t.Fatalf("decode schemas/registry.json: %v", err)
	}
	var tools []string
	if err := json.Unmarshal(reg[profile], &tools); err != nil || len(tools) == 0 {
		t.Fatalf("schemas/registry.json lists no tools for profile %q (%v)", profile, err)
	}
	return tools
}

// compact returns raw JSON without insignificant whitespace.
func compact(t testing.TB, raw []byte) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
