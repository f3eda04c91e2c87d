package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// brokenConfigs are the two ways runlens.json breaks: not JSON at all, and JSON its schema
// refuses. want is where and what each answer must name.
var brokenConfigs = []struct {
	name, file      string
	where, problem  string
	fixMentionsWhat string
}{
	{
		name:  "invalid JSON",
		file:  "{\n  \"docs\": {\"root\": \"docs\",}\n}\n",
		where: "runlens.json:2:27", problem: "invalid JSON", fixMentionsWhat: "syntax",
	},
	{
		name:  "JSON that fails its schema",
		file:  "{\n  \"docs\": {\"rooot\": \"docs\"}\n}\n",
		where: "runlens.json:2:12", problem: `/docs/rooot: unknown key "rooot"`, fixMentionsWhat: `you mean "root"?`,
	},
}

// TestServeStartsWithABrokenConfigAndSaysWhere serves a project whose runlens.json is broken,
// both ways: the server answers initialize and tools/list as usual, every tool but doctor
// answers config_invalid naming the file, line:column and problem with the fix, the doctor
// fails its workspace check with the same, and `runlens doctor` exits 1 reporting it.
func TestServeStartsWithABrokenConfigAndSaysWhere(t *testing.T) {
	for _, tt := range brokenConfigs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := newWorkspace(t)
			writeFile(t, root, "runlens.json", tt.file)
			s := startServe(t, root, nil, "--project-root", root, "--receiver", "off")

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			tools, err := s.cs.ListTools(ctx, &sdk.ListToolsParams{})
			if err != nil || len(tools.Tools) != len(registryTools(t)) {
				t.Fatalf("tools/list: %v, %d tools; want all %d", err, len(tools.Tools), len(registryTools(t)))
			}

			calls := map[string]any{
				"get_app_status":  map[string]any{},
				"list_runs":       map[string]any{},
				"search_docs":     map[string]any{"query": "retry"},
				"list_commands":   map[string]any{},
				"execute_command": map[string]any{"command": "test"},
			}
			for tool, args := range calls {
				te := wantToolError(t, tool, s.call(t, tool, args))
				if te.Code != "config_invalid" || !strings.HasPrefix(te.Message, tt.where+": ") || !strings.Contains(te.Message, tt.problem) {
					t.Errorf("%s: error %+v, want config_invalid at %s saying %s", tool, te, tt.where, tt.problem)
				}
				if !strings.Contains(te.Hint, tt.fixMentionsWhat) || !strings.Contains(te.Hint, "restart") {
					t.Errorf("%s: hint %q, want the fix and the restart", tool, te.Hint)
				}
				if strings.Contains(te.Message+te.Hint, root) {
					t.Errorf("%s: the error discloses the project's absolute path: %+v", tool, te)
				}
			}

			var doc doctorAnswer
			wantSuccess(t, "doctor", s.call(t, "doctor", map[string]any{}), &doc)
			c := doc.check(t, "workspace", "config_valid")
			if c.Status != "fail" || !strings.Contains(c.Summary, tt.where) || !strings.Contains(c.Summary, tt.problem) || !strings.Contains(c.Fix, tt.fixMentionsWhat) {
				t.Errorf("doctor config_valid = %+v, want a fail at %s with the fix", c, tt.where)
			}
			eventually(t, 10*time.Second, "serve's stderr names the broken file", func() bool {
				return strings.Contains(string(s.stderr.Bytes()), "runlens.json is invalid")
			})

			p := run(t, runOpts{dir: root}, runlensBinary(t), "doctor", "--project-root", root)
			if p.exitCode != 1 || !strings.Contains(string(p.stdout), tt.where) {
				t.Errorf("runlens doctor: exit %d, want 1 naming %s:\n%s%s", p.exitCode, tt.where, p.stdout, p.stderr)
			}
		})
	}
}

// TestABrokenConfigInTheCompactProfileAndAfterItsFix routes through the compact profile's
// router (doctor answers, other operations answer config_invalid), then fixes the file while
// the server runs: the answer says the file is valid now and the server must be restarted.
func TestABrokenConfigInTheCompactProfileAndAfterItsFix(t *testing.T) {
	root := newWorkspace(t)
	writeFile(t, root, "runlens.json", brokenConfigs[1].file)
	s := startServe(t, root, nil, "--project-root", root, "--receiver", "off", "--profile", "compact")

	te := wantToolError(t, "runlens", s.call(t, "runlens", map[string]any{"operation": "list_docs", "arguments": map[string]any{}}))
	if te.Code != "config_invalid" || !strings.HasPrefix(te.Message, brokenConfigs[1].where) {
		t.Errorf("routed list_docs: %+v, want config_invalid at %s", te, brokenConfigs[1].where)
	}
	var doc doctorAnswer
	wantSuccess(t, "doctor", s.call(t, "runlens", map[string]any{"operation": "doctor", "arguments": map[string]any{}}), &doc)
	if c := doc.check(t, "workspace", "config_valid"); c.Status != "fail" {
		t.Errorf("routed doctor config_valid = %+v, want fail", c)
	}

	writeFile(t, root, "runlens.json", `{"receiver": {"enabled": false}}`)
	te = wantToolError(t, "runlens", s.call(t, "runlens", map[string]any{"operation": "list_docs", "arguments": map[string]any{}}))
	if te.Code != "config_invalid" || !strings.Contains(te.Message, "valid now") || !strings.Contains(te.Hint, "Restart") {
		t.Errorf("after the fix: %+v, want config_invalid saying the file is valid now and to restart", te)
	}
}
