package hostcfg

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var runlens = Server{Name: "runlens", Command: "runlens", Args: []string{"serve"}}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRegisterMergesIntoExistingFilesAndKeepsOtherEntries(t *testing.T) {
	existing := map[Host]string{
		Claude: `{"mcpServers": {"other": {"command": "other-mcp"}}, "zzz": 1, "aaa": true}`,
		VSCode: `{"inputs": [], "servers": {"other": {"type": "stdio", "command": "x"}}}`,
		Cursor: `{"mcpServers": {"other": {"url": "http://localhost:1"}}}`,
		Codex:  "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other\"\n",
	}
	for _, h := range Hosts {
		t.Run(string(h), func(t *testing.T) {
			root := t.TempDir()
			write(t, root, File(h), existing[h])
			res, err := Register(root, h, runlens)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed {
				t.Fatal("first registration did not change the file")
			}
			got := read(t, root, File(h))
			if !strings.Contains(got, "other") {
				t.Fatalf("the other server was lost:\n%s", got)
			}
			if h == Codex {
				if !strings.Contains(got, "# my settings") || !strings.Contains(got, "[mcp_servers.runlens]\ncommand = \"runlens\"\nargs = [\"serve\"]") {
					t.Fatalf("codex config:\n%s", got)
				}
			} else {
				var doc map[string]map[string]map[string]any
				var loose map[string]json.RawMessage
				if err := json.Unmarshal([]byte(got), &loose); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, got)
				}
				key := "mcpServers"
				if h == VSCode {
					key = "servers"
				}
				if err := json.Unmarshal([]byte(`{"s":`+string(loose[key])+`}`), &doc); err != nil {
					t.Fatal(err)
				}
				entry := doc["s"]["runlens"]
				if entry["command"] != "runlens" || len(entry["args"].([]any)) != 1 {
					t.Fatalf("entry = %v", entry)
				}
				if (h == VSCode) != (entry["type"] == "stdio") {
					t.Fatalf("type = %v", entry["type"])
				}
			}
			if h == Claude && strings.Index(got, `"zzz"`) > strings.Index(got, `"aaa"`) {
				t.Fatalf("key order changed:\n%s", got)
			}
			again, err := Register(root, h, runlens)
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed || read(t, root, File(h)) != got {
				t.Fatal("a second registration changed the file")
			}
		})
	}
}

func TestRegisterCreatesMissingFiles(t *testing.T) {
	root := t.TempDir()
	for _, h := range Hosts {
		if _, err := Register(root, h, runlens); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, root, ".mcp.json"); !strings.Contains(got, `"runlens"`) {
		t.Fatalf(".mcp.json = %s", got)
	}
	if got := read(t, root, ".codex/config.toml"); got != "[mcp_servers.runlens]\ncommand = \"runlens\"\nargs = [\"serve\"]\n" {
		t.Fatalf("config.toml = %q", got)
	}
}

func TestRegisterRefusesAFileThatIsNotJSON(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".mcp.json", "{not json")
	if _, err := Register(root, Claude, runlens); err == nil {
		t.Fatal("want an error for a broken .mcp.json")
	}
	if read(t, root, ".mcp.json") != "{not json" {
		t.Fatal("a broken file was overwritten")
	}
}

func TestIgnoreAddsTheStoreFolderOnce(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "node_modules")
	added, err := Ignore(root, ".runlens/")
	if err != nil || !added {
		t.Fatalf("added = %v, err = %v", added, err)
	}
	added, err = Ignore(root, ".runlens/")
	if err != nil || added {
		t.Fatalf("second add: added = %v, err = %v", added, err)
	}
	if got := read(t, root, ".gitignore"); got != "node_modules\n.runlens/\n" {
		t.Fatalf(".gitignore = %q", got)
	}
}

func TestParseHosts(t *testing.T) {
	if hs, err := ParseHosts("all"); err != nil || len(hs) != 4 {
		t.Fatalf("all = %v, %v", hs, err)
	}
	if hs, err := ParseHosts("codex"); err != nil || len(hs) != 1 || hs[0] != Codex {
		t.Fatalf("codex = %v, %v", hs, err)
	}
	if _, err := ParseHosts("emacs"); err == nil {
		t.Fatal("want an error for an unknown host")
	}
}

// A host file keeps settings of every type beside its servers; the registration is found
// whatever they are.
func TestRegisteredReadsFilesWithOtherSettings(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".mcp.json", `{"mcpServers": {"runlens": {"command": "runlens"}}, "zzz": 1, "inputs": []}`)
	regs := Registered(root, "runlens")
	if len(regs) != 1 || regs[0].Command != "runlens" {
		t.Fatalf("registrations = %+v, want the one in .mcp.json", regs)
	}
}

// Codex rejects a file that defines a table twice: a registration written in another form is
// left alone or refused, never defined a second time.
func TestMergeTOMLNeverDefinesTheServerTwice(t *testing.T) {
	tests := []struct {
		name, old string
		refused   bool
	}{
		{"a header with a comment", "[mcp_servers.runlens] # mine\ncommand = 'x'\n", false},
		{"a header with spaces and quotes", "[ mcp_servers . \"runlens\" ]\ncommand = \"x\"\n", false},
		{"a sub-table", "[mcp_servers.runlens.env]\nA = \"1\"\n", false},
		{"dotted keys", "mcp_servers.runlens.command = \"x\"\n", true},
		{"an inline table", "mcp_servers = { runlens = { command = \"x\" } }\n", true},
		{"a key of the servers table", "[mcp_servers]\nrunlens = { command = \"x\" }\n", true},
		{"an unterminated multi-line string", "a = \"\"\"\ntext\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := mergeTOML([]byte(tt.old), runlens)
			if tt.refused {
				if err == nil {
					t.Fatalf("merged into %q:\n%s", tt.old, out)
				}
				return
			}
			if err != nil || string(out) != tt.old {
				t.Fatalf("mergeTOML = %q, %v; want the file left as it is", out, err)
			}
		})
	}
}
