package compat

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// tsReport is what testdata/ts-*.mjs print: the session the client negotiated, the tools it
// listed, and each call's result or the error the client raised.
type tsReport struct {
	Client          string                 `json:"client"`
	Era             string                 `json:"era"`
	ProtocolVersion string                 `json:"protocolVersion"`
	ServerInfo      *struct{ Name string } `json:"serverInfo"`
	Instructions    string                 `json:"instructions"`
	Tools           []string               `json:"tools"`
	Calls           []struct {
		Label             string          `json:"label"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Text              string          `json:"text"`
		Error             string          `json:"error"`
	} `json:"calls"`
	Fatal string `json:"fatal"`
}

// tsCall is one call of a script's plan.
type tsCall struct {
	Label     string          `json:"label"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// TestTypeScriptClients drives the built binary with both TypeScript SDKs over stdio, each
// listing every tool and calling each with its valid example: v1 (@modelcontextprotocol/sdk
// 1.32.2, the handshake era, Ajv draft-07 validation of structuredContent) and v2
// (@modelcontextprotocol/client 2.4.0 with versionNegotiation auto, which must land in the
// 2026-07-28 era, 2020-12 validation).
func TestTypeScriptClients(t *testing.T) {
	bin := runlensBinary(t)
	nodeBin := node(t)
	dir := scriptDir(t)
	ws := seededWorkspace(t)
	plan := toolPlan(t)
	want := registryTools(t)

	calls := make([]tsCall, len(plan))
	for i, c := range plan {
		calls[i] = tsCall{Label: c.label, Name: c.tool, Arguments: c.args}
	}
	planFile := writeJSON(t, dir, "plan.json", map[string]any{
		"command": bin,
		"args":    serveArgs(ws),
		"cwd":     ws,
		"calls":   calls,
	})

	tests := []struct {
		name, script, wantEra, wantVersion string
	}{
		{"the v1 SDK negotiates 2025-11-25 and accepts every answer", "ts-sdk-v1.mjs", "", "2025-11-25"},
		{"the v2 client in auto mode takes the modern era and accepts every answer", "ts-client-v2.mjs", "modern", "2026-07-28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := run(t, runOpts{dir: dir, env: nodeEnv(t), timeout: 90 * time.Second}, nodeBin, filepath.Join(dir, tt.script), planFile)
			if p.exitCode != 0 {
				t.Fatalf("%s exited %d; stderr:\n%s", tt.script, p.exitCode, tail(p.stderr))
			}
			var r tsReport
			if err := json.Unmarshal(p.stdout, &r); err != nil {
				t.Fatalf("decode %s report: %v\n%s", tt.script, err, tail(p.stdout))
			}
			if r.Fatal != "" {
				t.Fatalf("%s failed: %s\nstderr:\n%s", r.Client, r.Fatal, tail(p.stderr))
			}
			if r.Era != tt.wantEra || r.ProtocolVersion != tt.wantVersion {
				t.Errorf("negotiated era %q version %q, want era %q version %q", r.Era, r.ProtocolVersion, tt.wantEra, tt.wantVersion)
			}
			if r.ServerInfo == nil || r.ServerInfo.Name != "runlens" {
				t.Errorf("serverInfo = %+v, want name runlens", r.ServerInfo)
			}
			if r.Instructions == "" {
				t.Error("no instructions")
			}
			if !slices.Equal(r.Tools, want) {
				t.Errorf("tools = %v, want %v", r.Tools, want)
			}
			if len(r.Calls) != len(plan) {
				t.Fatalf("%d calls reported, want %d", len(r.Calls), len(plan))
			}
			for i, c := range r.Calls {
				if c.Label != plan[i].label {
					t.Fatalf("call %d reported as %q, want %q", i, c.Label, plan[i].label)
				}
				if c.Error != "" {
					t.Errorf("%s: %s %s: the client rejected the answer: %s", r.Client, c.Label, plan[i].args, c.Error)
					continue
				}
				a := answer{isError: c.IsError, text: c.Text}
				if string(c.StructuredContent) != "null" {
					a.structured = c.StructuredContent
				}
				checkAnswer(t, r.Client, plan[i], a, true)
			}
		})
	}
}
