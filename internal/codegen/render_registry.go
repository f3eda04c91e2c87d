package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// renderRegistry renders the registry: the Tool table of each profile, Lookup, the typed
// decode-and-dispatch function of every full-profile tool, and the version gate.
func (m *Model) renderRegistry() (*jen.File, error) {
	f := newFile(m.src.Root + "/registry.json and " + m.src.Root + "/tools/*.json")
	f.Comment("The version gate: generated code and the runtime it was generated for must agree, or the")
	f.Comment("build fails here.")
	f.Const().Id("_").Op("=").Qual(schemasPkg, "GenVersion1")
	f.Line()
	f.Comment("Annotations are the MCP tool annotations; nil means the schema does not say.")
	f.Type().Id("Annotations").Struct(
		jen.Id("ReadOnlyHint").Op(",").Id("DestructiveHint").Op(",").Id("IdempotentHint").Op(",").Id("OpenWorldHint").Op("*").Bool(),
	)
	f.Line()
	f.Comment("Budget is a tool's ceiling in bytes of serialized structured content for a standard and a")
	f.Comment("summary answer.")
	f.Type().Id("Budget").Struct(jen.Id("Standard").Op(",").Id("Summary").Int())
	f.Line()
	f.Comment("Tool is one entry of the registry: everything tools/list serves for a tool and how to call it.")
	f.Type().Id("Tool").Struct(
		jen.Id("Name").Op(",").Id("Title").Op(",").Id("Description").Op(",").Id("Family").String(),
		jen.Id("Annotations").Id("Annotations"),
		jen.Id("Budget").Id("Budget"),
		jen.Comment("InputSchema is the published bundled input schema (schemas/bundled), as on disk."),
		jen.Id("InputSchema").Index().Byte(),
		jen.Comment("OutputSchema is the published bundled output schema, as on disk."),
		jen.Id("OutputSchema").Index().Byte(),
		jen.Comment("ListedInputSchema and ListedOutputSchema are what tools/list serves of them: the"),
		jen.Comment("input without its root title and description, the output's shape and top-level"),
		jen.Comment("descriptions (schemas/listed). Answers are still validated against the published"),
		jen.Comment("schemas. The files are indented; the protocol layer serves them compact."),
		jen.Id("ListedInputSchema").Op(",").Id("ListedOutputSchema").Index().Byte(),
		jen.Comment("Call decodes already-validated arguments into the typed input, applies the schema"),
		jen.Comment("defaults and invokes the flow. Nil for the compact-profile tools."),
		jen.Id("Call").Func().Params(
			jen.Id("ctx").Qual("context", "Context"), jen.Id("f").Id("Flows"), jen.Id("args").Qual("encoding/json", "RawMessage"),
		).Params(jen.Any(), jen.Error()),
	)
	table := func(name, what string, tools []*Tool, withCall bool) {
		f.Line()
		f.Comment(fmt.Sprintf("%s is the %s, in registry order.", name, what))
		f.Var().Id(name).Op("=").Index().Id("Tool").ValuesFunc(func(g *jen.Group) {
			for _, t := range tools {
				g.Line().Add(m.toolEntry(t, withCall))
			}
			g.Line()
		})
	}
	table("Tools", "full profile", m.Full, true)
	table("CompactTools", "compact profile; its tools are served by hand-written code", m.Compact, false)
	f.Line()
	f.Comment("Lookup finds a tool of either profile by name.")
	f.Func().Id("Lookup").Params(jen.Id("name").String()).Params(jen.Id("Tool"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("list")).Op(":=").Range().Index(jen.Op("...")).Index().Id("Tool").Values(jen.Id("Tools"), jen.Id("CompactTools"))).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("list")).Block(
				jen.If(jen.Id("t").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("t"), jen.True())),
			),
		),
		jen.Return(jen.Id("Tool").Values(), jen.False()),
	)
	f.Line()
	m.callWith(f)
	f.Line()
	f.Comment("hint makes an annotation value.")
	f.Func().Id("hint").Params(jen.Id("b").Bool()).Op("*").Bool().Block(jen.Return(jen.Op("&").Id("b")))
	return f, nil
}

// toolEntry renders one registry entry.
func (m *Model) toolEntry(t *Tool, withCall bool) jen.Code {
	a := t.Meta.Annotations
	var hints []jen.Code
	for _, h := range []struct {
		name string
		v    *bool
	}{{"ReadOnlyHint", a.ReadOnlyHint}, {"DestructiveHint", a.DestructiveHint}, {"IdempotentHint", a.IdempotentHint}, {"OpenWorldHint", a.OpenWorldHint}} {
		if h.v != nil {
			hints = append(hints, jen.Id(h.name).Op(":").Id("hint").Call(jen.Lit(*h.v)))
		}
	}
	call := jen.Id("Call").Op(":").Nil()
	if withCall {
		call = jen.Id("Call").Op(":").Id("callWith").Call(jen.Id("Flows").Dot(m.MethodName(t)), jen.Id(m.ToolConstName(t)))
	}
	return jen.Values(
		jen.Line().Id("Name").Op(":").Id(m.ToolConstName(t)),
		jen.Line().Id("Title").Op(":").Lit(t.Meta.Title),
		jen.Line().Id("Description").Op(":").Lit(t.Meta.Description),
		jen.Line().Id("Family").Op(":").Lit(t.Meta.Family),
		jen.Line().Id("Annotations").Op(":").Id("Annotations").Values(hints...),
		jen.Line().Id("Budget").Op(":").Id("Budget").Values(
			jen.Id("Standard").Op(":").Lit(t.Meta.Budget.Standard), jen.Id("Summary").Op(":").Lit(t.Meta.Budget.Summary)),
		jen.Line().Id("InputSchema").Op(":").Id(m.SchemaConstName(t, "Input")),
		jen.Line().Id("OutputSchema").Op(":").Id(m.SchemaConstName(t, "Output")),
		jen.Line().Id("ListedInputSchema").Op(":").Id(m.ListedConstName(t, "Input")),
		jen.Line().Id("ListedOutputSchema").Op(":").Id(m.ListedConstName(t, "Output")),
		jen.Line().Add(call),
		jen.Line(),
	)
}

// callWith renders the one decode-and-call helper every full-profile tool's Call is made from:
// decode the validated arguments into the tool's input type, apply its schema defaults (the
// only place they are applied), call the flow.
func (m *Model) callWith(f *jen.File) {
	ctx, args := jen.Id("ctx").Qual("context", "Context"), jen.Id("args").Qual("encoding/json", "RawMessage")
	f.Comment("callWith makes a tool's Call from its Flows method: decode the validated arguments into the")
	f.Comment("input type, apply the schema defaults when the input has any, and call the flow.")
	f.Func().Id("callWith").Types(jen.Id("In").Op(",").Id("Out").Any()).Params(
		jen.Id("flow").Func().Params(jen.Id("Flows"), jen.Qual("context", "Context"), jen.Id("In")).Params(jen.Id("Out"), jen.Error()),
		jen.Id("tool").String(),
	).Func().Params(jen.Qual("context", "Context"), jen.Id("Flows"), jen.Qual("encoding/json", "RawMessage")).Params(jen.Any(), jen.Error()).Block(
		jen.Return(jen.Func().Params(ctx, jen.Id("f").Id("Flows"), args).Params(jen.Any(), jen.Error()).Block(
			jen.Var().Id("in").Id("In"),
			jen.If(jen.Err().Op(":=").Qual("encoding/json", "Unmarshal").Call(jen.Id("args"), jen.Op("&").Id("in")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("decode %s arguments: %w"), jen.Id("tool"), jen.Err())),
			),
			jen.If(jen.List(jen.Id("d"), jen.Id("ok")).Op(":=").Any().Call(jen.Op("&").Id("in")).Assert(jen.Interface(jen.Id("ApplyDefaults").Params())), jen.Id("ok")).Block(
				jen.Id("d").Dot("ApplyDefaults").Call(),
			),
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("flow").Call(jen.Id("f"), jen.Id("ctx"), jen.Id("in")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("out"), jen.Nil()),
		)),
	)
}
