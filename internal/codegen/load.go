package codegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// Source is a schema tree as read from disk: every JSON document, decoded with numbers kept
// exact, the registry, and the tools it names.
type Source struct {
	// Root is the folder name the files live in ("schemas"); every Location starts with it.
	Root string
	// Docs holds each decoded document by its path (Root + "/" + path inside the tree).
	Docs map[string]any
	// Full and Compact are the tools of each profile, in registry order.
	Full, Compact []*ToolSource
	// Config and Conventions are the paths of the optional configuration and telemetry
	// conventions schemas, "" when absent.
	Config, Conventions string
}

// ToolSource is one tool's three files and its decoded metadata.
type ToolSource struct {
	Meta                            ToolMeta
	MetaFile, InputFile, OutputFile string
}

// ToolMeta is the content of a .tool.json file: everything tools/list says about a tool
// besides its schemas.
type ToolMeta struct {
	Name        string      `json:"name"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Family      string      `json:"family"`
	Annotations Annotations `json:"annotations"`
	Budget      Budget      `json:"budget"`
}

// Annotations are the MCP tool annotations; nil means the file does not say.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Budget is a tool's byte ceilings for a standard and a summary answer.
type Budget struct {
	Standard int `json:"standard"`
	Summary  int `json:"summary"`
}

// Tools returns every tool, full profile first, in registry order.
func (s *Source) Tools() []*ToolSource { return append(slices.Clone(s.Full), s.Compact...) }

// toolName is what a tool name may look like: it becomes a file name, a Go identifier and a
// wire name.
var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Load reads the schema tree in fsys. root names the tree in locations and errors (normally
// "schemas"). Generated (bundled/, listed/) and example (examples/) folders are not read.
func Load(fsys fs.FS, root string) (*Source, error) {
	src := &Source{Root: root, Docs: map[string]any{}}
	var probs problems
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == BundledFolder || p == ListedFolder || p == "examples" || (p != "." && strings.HasPrefix(d.Name(), ".")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".json") {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		file := root + "/" + p
		v, err := decodeJSON(data)
		if err != nil {
			probs.add(Location{File: file}, "invalid JSON: %v", err)
			return nil
		}
		src.Docs[file] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read schemas: %w", err)
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	src.readRegistry(&probs)
	if _, ok := src.Docs[root+"/config.schema.json"]; ok {
		src.Config = root + "/config.schema.json"
	}
	if _, ok := src.Docs[root+"/conventions.schema.json"]; ok {
		src.Conventions = root + "/conventions.schema.json"
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	return src, nil
}

// registryFile is the shape of registry.json; other keys (descriptions) are ignored.
type registryFile struct {
	Full    []string `json:"full"`
	Compact []string `json:"compact"`
}

// readRegistry reads registry.json and the three files of every tool it names, and reports tool
// files the registry does not name (a tool that exists but is never served is a mistake).
func (s *Source) readRegistry(probs *problems) {
	regFile := s.Root + "/registry.json"
	raw, ok := s.Docs[regFile]
	if !ok {
		probs.add(Location{File: regFile}, "missing: the registry names the tools of each profile")
		return
	}
	var reg registryFile
	if err := remarshalLoose(raw, &reg); err != nil {
		probs.add(Location{File: regFile}, "want {\"full\": [names], \"compact\": [names]}: %v", err)
		return
	}
	if len(reg.Full) == 0 {
		probs.add(Location{File: regFile, Pointer: "/full"}, "the full profile names no tool")
	}
	seen := map[string]bool{}
	named := map[string]bool{}
	load := func(names []string, key string) []*ToolSource {
		var tools []*ToolSource
		for i, name := range names {
			at := Location{File: regFile, Pointer: fmt.Sprintf("/%s/%d", key, i)}
			if !toolName.MatchString(name) {
				probs.add(at, "tool name %q must match %s", name, toolName)
				continue
			}
			if seen[name] {
				probs.add(at, "tool %q is listed twice", name)
				continue
			}
			seen[name] = true
			if t := s.readTool(name, probs); t != nil {
				tools = append(tools, t)
				for _, f := range []string{t.MetaFile, t.InputFile, t.OutputFile} {
					named[f] = true
				}
			}
		}
		return tools
	}
	s.Full = load(reg.Full, "full")
	s.Compact = load(reg.Compact, "compact")
	for _, f := range sortedKeys(s.Docs) {
		if strings.HasPrefix(f, s.Root+"/tools/") && !named[f] {
			probs.add(Location{File: f}, "not a file of any tool in %s", regFile)
		}
	}
}

// readTool reads the metadata of one tool and checks its schema files exist.
func (s *Source) readTool(name string, probs *problems) *ToolSource {
	base := s.Root + "/tools/" + name
	t := &ToolSource{MetaFile: base + ".tool.json", InputFile: base + ".input.json", OutputFile: base + ".output.json"}
	ok := true
	for _, f := range []string{t.MetaFile, t.InputFile, t.OutputFile} {
		if _, found := s.Docs[f]; !found {
			probs.add(Location{File: f}, "missing: tool %q is in the registry", name)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	if err := remarshal(s.Docs[t.MetaFile], &t.Meta); err != nil {
		probs.add(Location{File: t.MetaFile}, "%v", err)
		return nil
	}
	if t.Meta.Name != name {
		probs.add(Location{File: t.MetaFile, Pointer: "/name"}, "name %q must be the file's tool name %q", t.Meta.Name, name)
	}
	return t
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number so that bounds and
// defaults are copied to the published schemas exactly as written.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fmt.Errorf("line %d column %d: %w", line, col, err)
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// remarshal decodes an already decoded JSON value into a Go type, rejecting unknown keys.
func remarshal(v any, into any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// remarshalLoose decodes an already decoded JSON value into a Go type, ignoring unknown keys.
func remarshalLoose(v any, into any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// sortedKeys returns a map's keys in order, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
