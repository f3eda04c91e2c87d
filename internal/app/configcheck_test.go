package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
)

// callTool calls tool through the MCP handler a serves and decodes its error object.
func callTool(t *testing.T, a *App, tool, args string) (isError bool, code, message, hint string) {
	t.Helper()
	res, err := a.Handler(server.ProfileFull).CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	var e struct{ Code, Message, Hint string }
	_ = json.Unmarshal(res.Structured, &e)
	return res.IsError, e.Code, e.Message, e.Hint
}

// TestOpenLeavesOutAFileItCannotBuild gives runlens a file that passes its schema but names a
// policy rule runlens cannot build: Open still assembles runlens, the tools answer
// config_invalid located at the part, and the doctor answers.
func TestOpenLeavesOutAFileItCannotBuild(t *testing.T) {
	root := t.TempDir()
	file := "{\"commands\": {\"policy\": {\"allow\": [\n  {\"name\": \"default_deny\", \"prefix\": [\"x\"]}]}}}"
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(root, nil, config.Overrides{ProjectRoot: root, Receiver: "off"}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	if !a.ConfigInvalid() {
		t.Fatal("a file whose policy does not build was applied")
	}
	isErr, code, msg, hint := callTool(t, a, "list_commands", `{}`)
	if !isErr || code != "config_invalid" || !strings.HasPrefix(msg, "runlens.json:1:2: /commands: ") || !strings.Contains(msg, "default_deny") || !strings.Contains(hint, "restart") {
		t.Errorf("list_commands = %v %s %q (hint %q), want config_invalid at runlens.json:1:2 /commands", isErr, code, msg, hint)
	}
	if isErr, _, _, _ := callTool(t, a, "doctor", `{"family": "workspace"}`); isErr {
		t.Error("doctor answered an error while the file is invalid")
	}
}

func TestAValidFileIsServedAsUsual(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(`{"docs": {"root": "docs"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(root, nil, config.Overrides{ProjectRoot: root, Receiver: "off"}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	if a.ConfigInvalid() || a.fileProblem() != nil {
		t.Fatalf("a valid file reported invalid: %v", a.fileProblem())
	}
	if isErr, code, _, _ := callTool(t, a, "list_commands", `{}`); isErr {
		t.Errorf("list_commands answered %s for a valid file", code)
	}
}

// A snippet deny pattern that does not parse is refused when the file is loaded, at its
// pointer, rather than silently turning locations off when the first stack is read.
func TestABadSnippetDenyPatternIsAConfigurationError(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(`{"telemetry": {"stackSnippetDeny": ["src/[x"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(root, nil, config.Overrides{ProjectRoot: root, Receiver: "off"}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	isErr, code, msg, _ := callTool(t, a, "get_recent_errors", `{}`)
	if !a.ConfigInvalid() || !isErr || code != "config_invalid" || !strings.Contains(msg, "/telemetry/stackSnippetDeny") {
		t.Fatalf("get_recent_errors = %v %s %q, want config_invalid at /telemetry/stackSnippetDeny", isErr, code, msg)
	}
}
