package codegen

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// metaSchemaFile is where the schema of .tool.json files lives, below the root.
const metaSchemaFile = "meta/tool.schema.json"

// metaSchema returns the decoded schema that .tool.json files follow, or nil when the tree has
// none (a small fixture tree may leave it out).
func (s *Source) metaSchema() any { return s.Docs[s.Root+"/"+metaSchemaFile] }

// validateToolMeta validates one .tool.json against the meta schema and reports each failing
// field at its place in the file.
func (s *Source) validateToolMeta(t *ToolSource) []*SchemaError {
	metaFile := s.Root + "/" + metaSchemaFile
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:runlens:meta:tool"
	if err := c.AddResource(url, s.metaSchema()); err != nil {
		return []*SchemaError{errorf(Location{File: metaFile}, "%v", err)}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return []*SchemaError{errorf(Location{File: metaFile}, "does not compile: %v", err)}
	}
	err = sch.Validate(s.Docs[t.MetaFile])
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []*SchemaError{errorf(Location{File: t.MetaFile}, "%v", err)}
	}
	var out []*SchemaError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := Location{File: t.MetaFile}.Child(e.InstanceLocation...)
		msg := e.ErrorKind.LocalizedString(printer)
		if _, isSchema := e.ErrorKind.(*kind.Schema); isSchema {
			msg = "does not follow " + metaFile
		}
		out = append(out, errorf(at, "%s (per %s)", strings.TrimSpace(msg), metaFile))
	}
	walk(verr)
	return out
}

// printer renders the validator's messages in English.
var printer = message.NewPrinter(language.English)
