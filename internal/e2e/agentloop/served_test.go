package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlens/runlens/internal/testkit"
)

// buildDir holds the runlens binary built for this test run; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runlens-agentloop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentloop: temp dir:", err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// unavailable stops a test that cannot get a tool: a failure under CI, where the project's
// scripts install it, and a skip elsewhere.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	t.Skipf("%s; run `make tools` or set RUNLENS_NODE_TOOLS to run this test", msg)
}

// runlensBinary builds ./cmd/runlens once per test run: the tests drive the real binary.
func runlensBinary(t testing.TB) string {
	t.Helper()
	bin, err := testkit.Binary(buildDir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// nodeTools is the folder of the pinned Node tooling (.ci/tools): the Node 22 runtime and the
// OpenTelemetry JS SDK.
func nodeTools(t testing.TB) string {
	t.Helper()
	dir, err := testkit.NodeTools("@opentelemetry/sdk-trace-node", "@opentelemetry/exporter-trace-otlp-proto")
	if err != nil {
		unavailable(t, "node tooling unavailable: %v", err)
	}
	return dir
}

// served is one MCP session with `runlens serve` over stdio.
type served struct {
	t  *testing.T
	cs *sdk.ClientSession
}

// serve starts the built binary on root with the official Go SDK client, and waits until it
// hosts the project's receiver (a command's telemetry is only pointed at a listening one).
func serve(t *testing.T, root string) *served {
	t.Helper()
	bin := runlensBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(bin, "serve", "--project-root", root)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RUNLENS_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// The gRPC receiver's default port would be contended by every test serving at once; the
	// session hosts the receiver itself, so no detached one outlives the test.
	cmd.Env = append(cmd.Env, "RUNLENS_RECEIVER_GRPC=off", "RUNLENS_RECEIVER_DETACHED=false")
	client := sdk.NewClient(&sdk.Implementation{Name: "runlens-agentloop", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to runlens serve: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	s := &served{t: t, cs: cs}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st struct {
			Source struct {
				Receivers []struct{ Protocol, State string } `json:"receivers"`
			} `json:"source"`
		}
		s.call("get_app_status", map[string]any{}, &st)
		if len(st.Source.Receivers) > 0 && st.Source.Receivers[0].State == "hosted" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("runlens serve did not host the receiver: %+v", st.Source.Receivers)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// call calls a tool, fails the test on a tool error, decodes structuredContent into out and
// returns its serialized size.
func (s *served) call(tool string, args map[string]any, out any) int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		s.t.Fatalf("%s answered a tool error: %s", tool, strings.Join(text, " "))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		s.t.Fatalf("%s: decode %s: %v", tool, raw, err)
	}
	return len(raw)
}
