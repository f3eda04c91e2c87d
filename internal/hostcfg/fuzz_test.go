package hostcfg

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzMergeJSON merges the registration into arbitrary bytes as a JSON host file. It never
// panics; what is not a JSON object (or whose servers key is not one) is refused; otherwise the
// result is JSON that keeps every other key and server as it was and registers runlens.
func FuzzMergeJSON(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"mcpServers": null}`, `{"mcpServers": []}`,
		`{"mcpServers": {"other": {"command": "other-mcp"}}, "zzz": 1, "aaa": true}`,
		`{"inputs": [], "servers": {"other": {"type": "stdio", "command": "x"}}}`,
		`{"mcpServers": {"runlens": {"command": "/old/runlens"}}}`,
		`{"a": 1, "a": 2, "mcpServers": {"x": 1, "x": {}}}`,
		`{"mcpServers": {"other": {"url": "http://localhost:1"}}} trailing`,
		"\ufeff{}", `{"k": "\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, old []byte) {
		out, _, err := mergeJSON(old, "mcpServers", runlens, false)
		if err != nil {
			return
		}
		if bytes.Equal(out, old) {
			return // already registered: left as the user wrote it
		}
		var before, after map[string]any
		if len(bytes.TrimSpace(old)) > 0 {
			if json.Unmarshal(old, &before) != nil {
				t.Fatalf("merged into %q, which is not a JSON object", old)
			}
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("merged file is not JSON: %v\n%s", err, out)
		}
		for k, v := range before {
			if k != "mcpServers" && !reflect.DeepEqual(after[k], v) {
				t.Fatalf("key %q changed from %v to %v", k, v, after[k])
			}
		}
		servers, _ := after["mcpServers"].(map[string]any)
		oldServers, _ := before["mcpServers"].(map[string]any)
		for k, v := range oldServers {
			if !reflect.DeepEqual(servers[k], v) {
				t.Fatalf("server %q changed from %v to %v", k, v, servers[k])
			}
		}
		if cmd, ok := jsonCommand(out, "mcpServers", "runlens"); !ok || cmd != runlens.Command {
			t.Fatalf("registration not found in the merged file: %s", out)
		}
	})
}

// FuzzMergeTOML merges the registration into arbitrary text as Codex's config.toml. It never
// panics; the text is kept as written, before the added table; and the registration is then
// found where Codex reads it, or the text is refused or left unchanged.
func FuzzMergeTOML(f *testing.F) {
	for _, s := range []string{
		"", "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other\"\n",
		"[mcp_servers.runlens]\ncommand = \"/old/runlens\"\n",
		"[mcp_servers.runlens] # mine\ncommand = 'x'\n",
		"[ mcp_servers . \"runlens\" ]\ncommand = \"x\"\n",
		"mcp_servers.runlens.command = \"x\"\n",
		"mcp_servers = { runlens = { command = \"x\" } }\n",
		"a = \"\"\"\nunterminated\n", "no newline at end", "x = 1\r\n[t]\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, old string) {
		out, _, err := mergeTOML([]byte(old), runlens)
		if err != nil || string(out) == old {
			return
		}
		if !strings.HasPrefix(string(out), old) {
			t.Fatalf("the file's own text changed:\n%q\n%q", old, out)
		}
		if cmd, ok := tomlCommand(out, "runlens"); !ok || cmd != runlens.Command {
			t.Fatalf("registration not found after merging into %q: %q (%v)", old, cmd, ok)
		}
	})
}
