// Command peer is the comparison server of runlens's protocol benchmarks: a minimal MCP server
// on the official go-sdk that serves runlens's 13 tool names with the same published input and
// output schemas, each answering a small constant structured result. It measures what the SDK
// costs for the same bootstrap, so the benchmarks can report runlens as a ratio of it on the
// same machine in the same run. It is a separate main package and never part of runlens.
//
// The tools come from tools.json, a snapshot of runlens's registry that a test of the bench
// package keeps equal to gen.Tools: importing gen would link runlens's own schema validator
// into the peer, and the peer would pay at start-up for a library no go-sdk server carries.
//
// Setting RUNLENS_BENCH_CPUPROFILE to a file name writes a CPU profile of the whole process
// (start-up included) there when stdin closes.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools is the registry snapshot: name, title, description, annotations and both schemas.
//
//go:embed tools.json
var tools []byte

// tool is one entry of tools.json.
type tool struct {
	Name         string             `json:"name"`
	Title        string             `json:"title"`
	Description  string             `json:"description"`
	Annotations  annotations        `json:"annotations"`
	InputSchema  *jsonschema.Schema `json:"inputSchema"`
	OutputSchema *jsonschema.Schema `json:"outputSchema"`
}

// annotations are the MCP hints; nil means the registry does not say.
type annotations struct {
	ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
}

// results holds one constant, schema-valid answer per tool (taken from the schema examples), so
// the SDK's output validation runs on every call just as runlens validates its own answers.
//
//go:embed results.json
var results []byte

// envProfile names the file that receives a CPU profile of the process.
const envProfile = "RUNLENS_BENCH_CPUPROFILE"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "peer: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	if path := os.Getenv(envProfile); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("create profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := newServer()
	if err != nil {
		return err
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil && err != context.Canceled {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// newServer registers every tool of the full profile with its published schemas, decoded into
// the SDK's schema type so the SDK resolves and enforces them as it would for its own tools.
func newServer() (*mcp.Server, error) {
	var list []tool
	if err := json.Unmarshal(tools, &list); err != nil {
		return nil, fmt.Errorf("decode tools: %w", err)
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(results, &answers); err != nil {
		return nil, fmt.Errorf("decode results: %w", err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Title: "go-sdk peer", Version: "1.0.0"}, nil)
	for _, t := range list {
		answer, ok := answers[t.Name]
		if !ok {
			return nil, fmt.Errorf("no constant result for tool %s", t.Name)
		}
		mcp.AddTool(srv, sdkTool(t), constant(answer))
	}
	return srv, nil
}

// sdkTool translates one registry entry into the SDK's tool description.
func sdkTool(t tool) *mcp.Tool {
	a := t.Annotations
	ann := &mcp.ToolAnnotations{DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
	if a.ReadOnlyHint != nil {
		ann.ReadOnlyHint = *a.ReadOnlyHint
	}
	if a.IdempotentHint != nil {
		ann.IdempotentHint = *a.IdempotentHint
	}
	return &mcp.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		Annotations:  ann,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
	}
}

// constant answers every call with the same structured result.
func constant(answer json.RawMessage) mcp.ToolHandlerFor[map[string]any, json.RawMessage] {
	return func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, json.RawMessage, error) {
		return nil, answer, nil
	}
}
