package codegen

import (
	"fmt"
	"slices"
	"strings"
)

// fixedIdentifiers are the package-level names the renderers declare whatever the schemas say.
var fixedIdentifiers = []string{
	"Annotations", "Budget", "CompactProfile", "CompactTools", "Flows", "FullProfile", "Lookup",
	"Published", "PublishedSchema", "SchemaDigest", "Tool", "Tools", "hint",
}

// checkIdentifiers reports two declarations of one Go name in package gen before anything is
// rendered: a definition file called tool.json, or enum values that differ only in
// punctuation, would otherwise surface as a compile error in generated code.
func (m *Model) checkIdentifiers() error {
	owners := map[string][]string{}
	claim := func(name, owner string) { owners[name] = append(owners[name], owner) }
	for _, id := range fixedIdentifiers {
		claim(id, "the generated registry")
	}
	for _, t := range m.Types() {
		claim(t.Name, "the type of "+t.Loc.String())
		if t.Kind == Enum {
			for _, v := range t.EnumValues {
				if _, ok := v.(string); ok {
					claim(m.EnumConstName(t, v), fmt.Sprintf("the %q value of %s", v, t.Loc))
				}
			}
		}
	}
	for _, t := range m.Tools() {
		claim(m.ToolConstName(t), "the name constant of tool "+t.Meta.Name)
		claim(m.SchemaConstName(t, "Input"), "the input schema constant of tool "+t.Meta.Name)
		claim(m.SchemaConstName(t, "Output"), "the output schema constant of tool "+t.Meta.Name)
		claim(m.ListedConstName(t, "Input"), "the listed input schema constant of tool "+t.Meta.Name)
		claim(m.ListedConstName(t, "Output"), "the listed output schema constant of tool "+t.Meta.Name)
	}
	for _, p := range m.Published {
		if !strings.HasPrefix(p.Path, "tools/") {
			claim(m.PublishedConstName(p), "the published schema constant of "+p.Source)
		}
	}
	var clashes []string
	for _, name := range sortedKeys(owners) {
		if o := owners[name]; len(o) > 1 {
			slices.Sort(o)
			clashes = append(clashes, fmt.Sprintf("Go name %s is declared for %s", name, strings.Join(o, " and ")))
		}
	}
	if len(clashes) > 0 {
		return fmt.Errorf("generated names clash; rename a schema file, definition or enum value:\n%s", strings.Join(clashes, "\n"))
	}
	return nil
}
