package compat

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKClient drives the built binary with the official Go SDK client (v1.8.0) over its
// CommandTransport: connected the SDK's default way (it probes server/discover first and
// takes the 2026-07-28 era when offered) and pinned to the 2025-11-25 handshake; with
// tools/list served in pages of five, walked to the end; every tool called with its valid
// example, and every structuredContent validated against the published schema here, because
// this client does not validate. The compact profile is driven the same way.
func TestGoSDKClient(t *testing.T) {
	bin := runlensBinary(t)
	ws := seededWorkspace(t)

	tests := []struct {
		name        string
		opts        *sdk.ClientSessionOptions
		profile     string
		tools       []string
		plan        []toolCall
		wantVersion string
	}{
		{
			name: "default connect probes server/discover and serves the modern era",
			opts: nil, profile: "full", tools: registryTools(t), plan: toolPlan(t), wantVersion: "2026-07-28",
		},
		{
			name: "a session pinned to 2025-11-25 uses the initialize handshake",
			opts: &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, profile: "full",
			tools: registryTools(t), plan: toolPlan(t), wantVersion: "2025-11-25",
		},
		{
			name: "the compact profile serves the router and its capabilities",
			opts: nil, profile: "compact", tools: profileTools(t, "compact"), plan: compactPlan(t), wantVersion: "2026-07-28",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.Command(bin, serveArgs(ws, "--page-size", "5", "--profile", tt.profile)...)
			cmd.Env = serverEnv()
			client := sdk.NewClient(&sdk.Implementation{Name: "runlens-compat-go-sdk", Version: "1.8.0"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, tt.opts)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()

			info := cs.InitializeResult()
			if info.ProtocolVersion != tt.wantVersion {
				t.Errorf("negotiated %q, want %q", info.ProtocolVersion, tt.wantVersion)
			}
			if info.ServerInfo == nil || info.ServerInfo.Name != "runlens" {
				t.Errorf("serverInfo = %+v, want name runlens", info.ServerInfo)
			}
			if info.Capabilities == nil || info.Capabilities.Tools == nil {
				t.Errorf("capabilities = %+v, want tools", info.Capabilities)
			}
			if info.Instructions == "" {
				t.Error("no instructions")
			}

			names, pages := listAllPages(t, ctx, cs)
			if !slices.Equal(names, tt.tools) {
				t.Errorf("tools/list across pages = %v, want %v", names, tt.tools)
			}
			if wantPages := (len(tt.tools) + 4) / 5; pages != wantPages {
				t.Errorf("tools/list took %d pages of five, want %d", pages, wantPages)
			}

			for _, call := range tt.plan {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: call.tool, Arguments: call.args})
				if err != nil {
					t.Errorf("call %s: %v", call.label, err)
					continue
				}
				checkAnswer(t, "go-sdk "+tt.wantVersion, call, goSDKAnswer(t, res), true)
			}
		})
	}
}

// listAllPages walks tools/list by hand, following nextCursor, and returns the names in order
// and the number of pages.
func listAllPages(t *testing.T, ctx context.Context, cs *sdk.ClientSession) (names []string, pages int) {
	t.Helper()
	params := &sdk.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			t.Fatalf("tools/list page %d: %v", pages+1, err)
		}
		pages++
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if res.NextCursor == "" || pages > 100 {
			return names, pages
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// goSDKAnswer extracts what checkAnswer needs from the SDK's decoded result.
func goSDKAnswer(t *testing.T, res *sdk.CallToolResult) answer {
	t.Helper()
	a := answer{isError: res.IsError}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatalf("re-encode structuredContent: %v", err)
		}
		a.structured = raw
	}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			a.text = tc.Text
			break
		}
	}
	return a
}
