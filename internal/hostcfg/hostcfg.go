// Package hostcfg writes the project-scoped MCP registration of runlens for the hosts that read
// one from the project folder: Claude Code (.mcp.json), Codex (.codex/config.toml), VS Code
// (.vscode/mcp.json) and Cursor (.cursor/mcp.json). It merges into existing files: other
// servers, other keys and their order survive, and a second run changes nothing.
package hostcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Host is an MCP host runlens can register with.
type Host string

// The hosts, in the order `runlens init --host all` writes them.
const (
	Claude Host = "claude"
	Codex  Host = "codex"
	VSCode Host = "vscode"
	Cursor Host = "cursor"
)

// Hosts lists every host.
var Hosts = []Host{Claude, Codex, VSCode, Cursor}

// ParseHosts reads the --host flag: one host name or "all".
func ParseHosts(s string) ([]Host, error) {
	if s == "" || s == "all" {
		return Hosts, nil
	}
	for _, h := range Hosts {
		if string(h) == s {
			return []Host{h}, nil
		}
	}
	return nil, fmt.Errorf("unknown host %q: want claude, codex, vscode, cursor or all", s)
}

// Server is the registration to write.
type Server struct {
	Name    string   // the server's key, "runlens"
	Command string   // the program, "runlens" (looked up on PATH by the host)
	Args    []string // ["serve"]
}

// Result says what happened to one file.
type Result struct {
	Host    Host
	File    string // relative to the project root
	Changed bool
	Note    string
}

// File is the registration file of h, relative to the project root.
func File(h Host) string {
	switch h {
	case Claude:
		return ".mcp.json"
	case Codex:
		return ".codex/config.toml"
	case VSCode:
		return ".vscode/mcp.json"
	default:
		return ".cursor/mcp.json"
	}
}

// Register writes s into h's file under root.
func Register(root string, h Host, s Server) (Result, error) {
	rel := File(h)
	path := filepath.Join(root, filepath.FromSlash(rel))
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("read %s: %w", rel, err)
	}
	var updated []byte
	var note string
	err = nil
	switch h {
	case Codex:
		updated, note, err = mergeTOML(old, s)
	case VSCode:
		updated, note, err = mergeJSON(old, "servers", s, true)
	default:
		updated, note, err = mergeJSON(old, "mcpServers", s, false)
	}
	if err != nil {
		return Result{}, fmt.Errorf("merge %s: %w", rel, err)
	}
	res := Result{Host: h, File: rel, Note: note}
	if bytes.Equal(old, updated) {
		return res, nil
	}
	if err := writeFile(path, updated); err != nil {
		return Result{}, fmt.Errorf("write %s: %w", rel, err)
	}
	res.Changed = true
	return res, nil
}

// Ignore adds line to the project's .gitignore unless it is already there.
func Ignore(root, line string) (bool, error) {
	path := filepath.Join(root, ".gitignore")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read .gitignore: %w", err)
	}
	bare := strings.Trim(line, "/")
	for _, l := range strings.Split(string(old), "\n") {
		if strings.Trim(strings.TrimSpace(l), "/") == bare {
			return false, nil
		}
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString(line + "\n")
	return true, writeFile(path, b.Bytes())
}

// writeFile writes atomically (a temporary file renamed over the old one), so an interrupted
// init never leaves a half-written host configuration.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// mergeJSON adds s under the servers key of a JSON host file, keeping every other key and the
// order of keys. An existing entry of the same name is left as the user wrote it.
func mergeJSON(old []byte, serversKey string, s Server, withType bool) ([]byte, string, error) {
	root := &object{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, root); err != nil {
			return nil, "", fmt.Errorf("not a JSON object: %w", err)
		}
	}
	servers := &object{}
	if raw, ok := root.get(serversKey); ok {
		if err := json.Unmarshal(raw, servers); err != nil {
			return nil, "", fmt.Errorf("%s is not a JSON object: %w", serversKey, err)
		}
	}
	if _, ok := servers.get(s.Name); ok {
		return old, "already registered; left as it is", nil
	}
	entry := map[string]any{"command": s.Command, "args": s.Args}
	if withType {
		entry["type"] = "stdio"
	}
	raw, err := json.Marshal(entry)
	if err != nil {
		return nil, "", err
	}
	servers.set(s.Name, raw)
	sraw, err := json.Marshal(servers)
	if err != nil {
		return nil, "", err
	}
	root.set(serversKey, sraw)
	flat, err := json.Marshal(root)
	if err != nil {
		return nil, "", err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, flat, "", "  "); err != nil {
		return nil, "", err
	}
	out.WriteByte('\n')
	return out.Bytes(), "registered", nil
}

// mergeTOML adds a [mcp_servers.<name>] table to Codex's config.toml unless one exists. The file
// is edited as text so comments and formatting elsewhere survive. A file that already defines
// the server in another form (dotted keys, an inline table, a header written with spaces,
// quotes or a comment), or that ends inside a multi-line string, is refused rather than given a
// second definition Codex would reject.
func mergeTOML(old []byte, s Server) ([]byte, string, error) {
	text := string(old)
	if strings.Count(text, `"""`)%2 != 0 || strings.Count(text, "'''")%2 != 0 {
		return nil, "", errors.New("the file ends inside a multi-line string; register runlens by hand")
	}
	var table []string // the keys of the current table; nil at the root
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if keys, ok := tomlHeader(l); ok {
			if len(keys) >= 2 && keys[0] == "mcp_servers" && keys[1] == s.Name {
				return old, "already registered; left as it is", nil
			}
			table = keys
			continue
		}
		key := tomlLineKey(l)
		switch {
		case len(table) == 0 && key == "mcp_servers",
			len(table) == 1 && table[0] == "mcp_servers" && key == s.Name:
			return nil, "", fmt.Errorf("the file defines mcp_servers in a form runlens does not edit; add [mcp_servers.%s] by hand", s.Name)
		}
	}
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = tomlString(a)
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 {
		if !bytes.HasSuffix(old, []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", s.Name, tomlString(s.Command), strings.Join(args, ", "))
	return b.Bytes(), "registered", nil
}

// tomlHeader reads a table header line, "[a.b]" with bare or quoted keys, blanks around them and
// a comment after, into its keys. An array of tables ("[[a]]") is a header too.
func tomlHeader(l string) ([]string, bool) {
	if !strings.HasPrefix(l, "[") {
		return nil, false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(l, "["), "[")
	var keys []string
	for {
		rest = strings.TrimLeft(rest, " \t")
		key, after, ok := tomlKey(rest)
		if !ok {
			return nil, false
		}
		keys = append(keys, key)
		rest = strings.TrimLeft(after, " \t")
		if strings.HasPrefix(rest, ".") {
			rest = rest[1:]
			continue
		}
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "]"), "]")
		rest = strings.TrimLeft(rest, " \t")
		return keys, rest == "" || strings.HasPrefix(rest, "#")
	}
}

// tomlLineKey is the first key of a key/value line ("a.b = 1" → "a"), or "".
func tomlLineKey(l string) string {
	key, _, ok := tomlKey(l)
	if !ok {
		return ""
	}
	return key
}

// tomlKey reads one bare, "basic" or 'literal' key at the start of s.
func tomlKey(s string) (key, rest string, ok bool) {
	switch {
	case strings.HasPrefix(s, `"`):
		end := 1
		for end < len(s) && s[end] != '"' {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(s) {
			return "", "", false
		}
		if json.Unmarshal([]byte(s[:end+1]), &key) != nil {
			return "", "", false
		}
		return key, s[end+1:], true
	case strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", false
		}
		return s[1 : end+1], s[end+2:], true
	}
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] == '-' || 'a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z' || '0' <= s[n] && s[n] <= '9') {
		n++
	}
	return s[:n], s[n:], n > 0
}

// tomlString quotes s as a TOML basic string (JSON string escapes are valid TOML escapes).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// object is a JSON object that remembers the order of its keys.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// UnmarshalJSON reads an object, keeping key order.
func (o *object) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("expected an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		o.set(key, v)
	}
	_, err = dec.Token()
	return err
}

// MarshalJSON writes the object in its key order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Registration is how one host file registers the server: the command it starts, empty for a
// registration without one (a URL).
type Registration struct {
	Host    Host
	File    string // relative to the project root
	Command string
}

// Registered reads the registration of the server name from every host file under root that
// has one. A file that cannot be read or parsed counts as not registering it.
func Registered(root, name string) []Registration {
	var regs []Registration
	for _, h := range Hosts {
		rel := File(h)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		var command string
		var ok bool
		switch h {
		case Codex:
			command, ok = tomlCommand(data, name)
		case VSCode:
			command, ok = jsonCommand(data, "servers", name)
		default:
			command, ok = jsonCommand(data, "mcpServers", name)
		}
		if ok {
			regs = append(regs, Registration{Host: h, File: rel, Command: command})
		}
	}
	return regs
}

// jsonCommand finds serversKey.name.command in a JSON host file.
func jsonCommand(data []byte, serversKey, name string) (string, bool) {
	// Only the servers key need be an object: hosts keep other settings of every type there.
	var file map[string]json.RawMessage
	var servers map[string]json.RawMessage
	if json.Unmarshal(data, &file) != nil || json.Unmarshal(file[serversKey], &servers) != nil {
		return "", false
	}
	raw, ok := servers[name]
	if !ok {
		return "", false
	}
	var entry struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(raw, &entry) // an entry that is not an object registers no command
	return entry.Command, true
}

// tomlCommand finds the command key of the [mcp_servers.<name>] table of Codex's config.toml,
// read as text like mergeTOML writes it.
func tomlCommand(data []byte, name string) (string, bool) {
	in, found := false, false
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if keys, ok := tomlHeader(l); ok {
			in = len(keys) == 2 && keys[0] == "mcp_servers" && keys[1] == name
			found = found || in
			continue
		}
		key, value, ok := strings.Cut(l, "=")
		if !in || !ok || strings.TrimSpace(key) != "command" {
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			return value[1 : len(value)-1], true
		}
		var s string
		if json.Unmarshal([]byte(value), &s) == nil {
			return s, true
		}
		return value, true
	}
	return "", found
}

// Resolve finds the program a host would start for command: a path is checked as it is, a bare
// name is looked up on PATH. The error says why a host could not start it.
func Resolve(command string) (string, error) {
	if command == "" {
		return "", errors.New("the registration names no command")
	}
	if strings.ContainsRune(command, filepath.Separator) || strings.ContainsRune(command, '/') {
		fi, err := os.Stat(command)
		if err != nil {
			return "", fmt.Errorf("%s does not exist", command)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", command)
		}
		return command, nil
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH", command)
	}
	return path, nil
}

// SetObjectKeys sets keys of the object under section of the JSON file at path (runlens.json),
// creating the file, the section or the keys as needed and keeping every other key and the
// order of keys. values are key and value pairs, in the order new keys are added.
func SetObjectKeys(path, section string, values [][2]string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	root := &object{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, root); err != nil {
			return fmt.Errorf("%s is not a JSON object: %w", filepath.Base(path), err)
		}
	}
	sec := &object{}
	if raw, ok := root.get(section); ok {
		if err := json.Unmarshal(raw, sec); err != nil {
			return fmt.Errorf("%s in %s is not a JSON object: %w", section, filepath.Base(path), err)
		}
	}
	for _, kv := range values {
		v, _ := json.Marshal(kv[1])
		sec.set(kv[0], v)
	}
	sraw, err := json.Marshal(sec)
	if err != nil {
		return err
	}
	root.set(section, sraw)
	flat, err := json.Marshal(root)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, flat, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return writeFile(path, out.Bytes())
}
