package server

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/toolerr"
)

// route serves the compact profile's router: it validates the router's own arguments, then
// hands the operation's arguments to the full tool of that name, which validates them against
// its own input schema and answers with its own output, bounds and errors.
func (h *Handler) route(ctx context.Context, router gen.Tool, args json.RawMessage) (mcp.CallResult, error) {
	if res, bad := h.checkArgs(ctx, router, args, ""); bad {
		return res, nil
	}
	var in gen.RunlensInput
	// The arguments are handed on as sent, not re-encoded from in.Arguments: decoding them
	// into a map would turn every number into a float64 before the operation validates it.
	var raw struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(args, &in) != nil || json.Unmarshal(args, &raw) != nil {
		return h.errorResult(toolerr.New(gen.ErrorCodeInvalidArguments, "the router's arguments are not a JSON object")), nil
	}
	op, ok := gen.Lookup(string(in.Operation))
	if !ok || op.Call == nil {
		// The router's schema enumerates the operations, so this is only reachable when the
		// enum and the registry disagree: say so rather than guess.
		return h.errorResult(toolerr.Newf(gen.ErrorCodeUnknownOperation, "unknown operation %q", in.Operation).
			WithChoices(gen.FullProfile).WithHint("call runlens_capabilities for the operations and their input schemas")), nil
	}
	opArgs := raw.Arguments
	if len(opArgs) == 0 || string(opArgs) == "null" {
		opArgs = json.RawMessage("{}")
	}
	return h.call(ctx, op, opArgs, op.Name)
}

// capabilities answers runlens_capabilities: the profile, the telemetry sources, the tool
// families and every operation with its argument names. Naming an operation returns that one
// with its bundled input schema inline, the same document tools/list publishes for the tool in
// the full profile, so a compact-profile client can build and check arguments without a file
// it cannot fetch. All thirteen schemas inline would be some 12 KB; the default answer stays
// near 3 KB and costs one more call only for the operation the agent actually uses.
func (h *Handler) capabilities(ctx context.Context, args json.RawMessage) []byte {
	var in gen.RunlensCapabilitiesInput
	_ = json.Unmarshal(args, &in) // validated against its schema before this runs
	out := gen.RunlensCapabilitiesOutput{
		Profile:    gen.RunlensCapabilitiesOutputProfile(h.opts.Profile),
		Operations: []gen.RunlensCapabilitiesOutputOperation{},
	}
	if h.opts.Sources != nil {
		for _, s := range h.opts.Sources(ctx) {
			src := gen.RunlensCapabilitiesOutputSource{Kind: gen.SourceKind(s.Kind), Reachable: s.Reachable}
			if s.Endpoint != "" {
				src.Endpoint = &s.Endpoint
			}
			out.Sources = append(out.Sources, src)
		}
	}
	seen := map[gen.ToolFamily]bool{}
	for _, t := range gen.Tools {
		family := gen.ToolFamily(t.Family)
		if !seen[family] {
			seen[family] = true
			out.Families = append(out.Families, family)
		}
		if in.Operation != nil && string(*in.Operation) != t.Name {
			continue
		}
		names, required := argumentsOf(t.InputSchema)
		op := gen.RunlensCapabilitiesOutputOperation{
			Name:      gen.Operation(t.Name),
			Family:    family,
			Title:     t.Title,
			Arguments: names,
			Required:  required,
		}
		if t.Description != "" {
			op.Description = &t.Description
		}
		if in.Operation != nil {
			// The published schema, closed objects and all, so a client of the compact profile
			// can check its arguments exactly as the server will (tools/list serves less).
			_ = json.Unmarshal(t.InputSchema, &op.InputSchema) // generated: always an object
		}
		out.Operations = append(out.Operations, op)
	}
	raw, _ := json.Marshal(out)
	return raw
}

// argumentsOf lists the top-level properties of an input schema, sorted, and its required ones
// in schema order.
func argumentsOf(schema json.RawMessage) (names, required []string) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s) // generated from a linted schema: always an object
	names = make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, s.Required
}
