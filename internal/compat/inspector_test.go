package compat

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The MCP Inspector CLI's documented exit codes (clients/cli EXIT_CODES).
const (
	inspectorOK        = 0
	inspectorToolError = 5 // the tool answered with isError: true
)

// inspectorEras are the Inspector's --protocol-era values: the 2025 handshake, a
// server/discover probe with fallback, and the 2026-07-28 era only.
var inspectorEras = []string{"legacy", "auto", "modern"}

// startupBound is the seed's release gate for startup plus discovery through the Inspector.
const startupBound = 2000 * time.Millisecond

// TestInspectorCLI drives the built binary with the MCP Inspector CLI (2.12.0): tools/list
// with --strict (exit 0 means no tool schema has a portability problem) and a tools/call of
// every tool with its valid example in each protocol era, plus a denied command, which the
// Inspector reports as a tool error (exit 5). Ten initialize + list sessions are timed first,
// alone after one untimed warm-up, and their p95 must stay under the seed's 2,000 ms.
func TestInspectorCLI(t *testing.T) {
	bin := runlensBinary(t)
	entry := toolPath(t, "@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	nodeBin := node(t)
	ws := seededWorkspace(t)

	inspectProfile := func(t *testing.T, profile, era string, args ...string) proc {
		t.Helper()
		argv := append([]string{entry, "--cli", "--format", "json", "--protocol-era", era}, args...)
		argv = append(append(argv, "--", bin), serveArgs(ws, "--profile", profile)...)
		return run(t, runOpts{env: nodeEnv(t), timeout: 90 * time.Second}, nodeBin, argv...)
	}
	inspect := func(t *testing.T, era string, args ...string) proc {
		t.Helper()
		return inspectProfile(t, "full", era, args...)
	}

	t.Run("ten initialize and tools/list sessions stay under the startup bound", func(t *testing.T) {
		if p := inspect(t, "legacy", "--method", "tools/list"); p.exitCode != inspectorOK { // warm-up, untimed
			t.Fatalf("tools/list exited %d; stderr:\n%s", p.exitCode, tail(p.stderr))
		}
		var took []time.Duration
		for range 10 {
			p := inspect(t, "legacy", "--method", "tools/list")
			if p.exitCode != inspectorOK {
				t.Fatalf("tools/list exited %d; stderr:\n%s", p.exitCode, tail(p.stderr))
			}
			took = append(took, p.elapsed)
		}
		p95 := nearestRank(took, 0.95)
		t.Logf("Inspector CLI initialize + tools/list, 10 sessions: median %s, p95 %s (bound %s)",
			nearestRank(took, 0.5).Round(time.Millisecond), p95.Round(time.Millisecond), startupBound)
		if p95 >= startupBound {
			t.Errorf("p95 startup + discovery %s, want under %s (all: %v)", p95, startupBound, took)
		}
	})

	listCases := []struct{ profile, era string }{{"full", "legacy"}, {"full", "auto"}, {"full", "modern"}, {"compact", "auto"}}
	for _, lc := range listCases {
		t.Run(fmt.Sprintf("tools/list --strict finds no portability problem in the %s profile, %s era", lc.profile, lc.era), func(t *testing.T) {
			t.Parallel()
			want := profileTools(t, lc.profile)
			p := inspectProfile(t, lc.profile, lc.era, "--method", "tools/list", "--strict")
			if p.exitCode != inspectorOK {
				t.Fatalf("exit %d, want %d; stderr:\n%s", p.exitCode, inspectorOK, tail(p.stderr))
			}
			if notes := strings.TrimSpace(string(p.stderr)); notes != "" {
				t.Logf("--strict notes below error severity:\n%s", notes)
			}
			var out struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal(p.stdout, &out); err != nil {
				t.Fatalf("decode Inspector output: %v\n%s", err, tail(p.stdout))
			}
			var names []string
			for _, tool := range out.Result.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, want) {
				t.Errorf("tools = %v, want %v", names, want)
			}
		})
	}

	type callCase struct {
		profile, era string
		call         toolCall
	}
	var calls []callCase
	for _, era := range inspectorEras {
		for _, call := range toolPlan(t) {
			calls = append(calls, callCase{"full", era, call})
		}
	}
	for _, call := range compactPlan(t) {
		calls = append(calls, callCase{"compact", "auto", call})
	}
	for _, cc := range calls {
		call := cc.call
		wantExit := inspectorOK
		if call.wantError != "" {
			wantExit = inspectorToolError
		}
		name := fmt.Sprintf("tools/call %s exits %d in the %s profile, %s era", call.label, wantExit, cc.profile, cc.era)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := inspectProfile(t, cc.profile, cc.era, "--method", "tools/call", "--tool-name", call.tool, "--tool-args-json", string(call.args))
			if p.exitCode != wantExit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", p.exitCode, wantExit, tail(p.stderr))
			}
			var out struct {
				Result struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				} `json:"result"`
			}
			if err := json.Unmarshal(p.stdout, &out); err != nil {
				t.Fatalf("decode Inspector output: %v\n%s", err, tail(p.stdout))
			}
			a := answer{isError: out.Result.IsError, structured: out.Result.StructuredContent}
			if len(out.Result.Content) > 0 {
				a.text = out.Result.Content[0].Text
			}
			checkAnswer(t, "inspector "+cc.era, call, a, true)
		})
	}
}

// nearestRank is the p-th percentile of ds by the nearest-rank method (element ceil(p·n)−1 of
// the sorted values), the definition runlens uses everywhere.
func nearestRank(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p+0.999999999) - 1
	return s[max(0, min(i, len(s)-1))]
}
