package codegen

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Meta schemas describe the generator's own input files, below the root. A tree without them
// (a small fixture) skips the check.
const (
	toolMetaSchema     = "meta/tool.schema.json"
	registryMetaSchema = "meta/registry.schema.json"
)

// printer renders the validator's messages in English.
var printer = message.NewPrinter(language.English)

// metaValidator validates the generator's input files against their meta schemas, compiling
// each meta schema once.
type metaValidator struct {
	src      *Source
	compiled map[string]*jsonschema.Schema
}

// validate checks one document against a meta schema (a path below the root) and reports each
// failing field at its place in the document. It reports nothing when the tree has no such
// meta schema.
func (mv *metaValidator) validate(meta, file string) []*SchemaError {
	metaFile := mv.src.Root + "/" + meta
	doc, ok := mv.src.Docs[metaFile]
	if !ok {
		return nil
	}
	sch, ok := mv.compiled[meta]
	if !ok {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "urn:runlens:" + meta
		if err := c.AddResource(url, doc); err != nil {
			return []*SchemaError{errorf(Location{File: metaFile}, "%v", err)}
		}
		var err error
		if sch, err = c.Compile(url); err != nil {
			return []*SchemaError{errorf(Location{File: metaFile}, "does not compile: %v", err)}
		}
		mv.compiled[meta] = sch
	}
	err := sch.Validate(mv.src.Docs[file])
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []*SchemaError{errorf(Location{File: file}, "%v", err)}
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
		at := Location{File: file}.Child(e.InstanceLocation...)
		msg := e.ErrorKind.LocalizedString(printer)
		if _, isSchema := e.ErrorKind.(*kind.Schema); isSchema {
			msg = "does not follow the meta schema"
		}
		out = append(out, errorf(at, "%s (per %s)", strings.TrimSpace(msg), metaFile))
	}
	walk(verr)
	return out
}
