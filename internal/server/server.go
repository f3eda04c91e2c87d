// Package server joins the protocol core to the generated registry: it serves the active
// profile's tools, validates arguments against each tool's published input schema, dispatches to
// the hand-written flows, then shapes (budgets, truncation), redacts and validates every answer
// before it leaves. It is the one path every tool call takes, so every bound and disclosure rule
// holds for every tool alike.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/contract"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// Profile selects which tools tools/list serves.
type Profile string

const (
	// ProfileFull serves the 13 named tools (the default).
	ProfileFull Profile = "full"
	// ProfileCompact serves runlens_capabilities and the runlens router only, to keep the
	// bootstrap tools/list small; every operation keeps its own bounds and errors.
	ProfileCompact Profile = "compact"
)

// ParseProfile reads a profile name; empty means full.
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case "", ProfileFull:
		return ProfileFull, nil
	case ProfileCompact:
		return ProfileCompact, nil
	}
	return "", fmt.Errorf("unknown profile %q: want full or compact", s)
}

// Budgets override the contract's byte bounds; a zero field keeps the tool's own.
type Budgets struct {
	Standard, Large, Summary, FullCeiling int
}

// Options configure a Handler.
type Options struct {
	Profile  Profile
	Flows    gen.Flows
	Redactor *shape.Redactor
	Budgets  Budgets
	// Sources describes the telemetry sources for runlens_capabilities; nil lists none.
	Sources func(ctx context.Context) []Source
	Logger  *slog.Logger
}

// Source is one telemetry source as runlens_capabilities reports it.
type Source struct {
	Kind      string `json:"kind"`
	Endpoint  string `json:"endpoint,omitempty"`
	Reachable *bool  `json:"reachable,omitempty"`
}

// Handler implements mcp.Handler over the generated registry.
type Handler struct {
	opts  Options
	tools []gen.Tool
	infos []mcp.ToolInfo
}

var _ mcp.Handler = (*Handler)(nil)

// New returns a Handler serving o.Profile.
func New(o Options) *Handler {
	if o.Profile == "" {
		o.Profile = ProfileFull
	}
	if o.Redactor == nil {
		o.Redactor = shape.NewRedactor(shape.RedactorOptions{SensitiveKeys: shape.DefaultSensitiveKeys()})
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: o}
	h.tools = gen.Tools
	if o.Profile == ProfileCompact {
		h.tools = gen.CompactTools
	}
	for _, t := range h.tools {
		h.infos = append(h.infos, toolInfo(t))
	}
	return h
}

// Tools implements mcp.Handler.
func (h *Handler) Tools() []mcp.ToolInfo { return h.infos }

// CallTool implements mcp.Handler.
func (h *Handler) CallTool(ctx context.Context, req mcp.CallRequest) (mcp.CallResult, error) {
	t, ok := h.lookup(req.Name)
	if !ok {
		return mcp.CallResult{}, fmt.Errorf("%w: %q", mcp.ErrUnknownTool, req.Name)
	}
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	ctx = callctx.WithProgress(ctx, req.Progress)
	switch t.Name {
	case gen.ToolRunlens:
		return h.route(ctx, t, args)
	case gen.ToolRunlensCapabilities:
		if res, bad := h.checkArgs(ctx, t, args, ""); bad {
			return res, nil
		}
		return h.finish(t, shape.Standard, h.capabilities(ctx, args), nil)
	}
	return h.call(ctx, t, args, "")
}

// lookup finds a tool of the active profile.
func (h *Handler) lookup(name string) (gen.Tool, bool) {
	for _, t := range h.tools {
		if t.Name == name {
			return t, true
		}
	}
	return gen.Tool{}, false
}

// call validates args, runs the flow and shapes its answer. op names the compact-profile
// operation in messages ("" in the full profile).
func (h *Handler) call(ctx context.Context, t gen.Tool, args json.RawMessage, op string) (mcp.CallResult, error) {
	if res, bad := h.checkArgs(ctx, t, args, op); bad {
		return res, nil
	}
	detail := detailOf(args)
	ctx = callctx.WithPagingSlot(ctx)
	out, err := t.Call(ctx, h.opts.Flows, args)
	if err != nil {
		return h.failure(ctx, t, err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return mcp.CallResult{}, fmt.Errorf("encode %s output: %w", t.Name, err)
	}
	return h.finish(t, detail, raw, callctx.Paging(ctx))
}

// checkArgs validates args against t's input schema; on failure it returns the tool error result
// that lists every failing field, so the model can correct itself.
func (h *Handler) checkArgs(ctx context.Context, t gen.Tool, args json.RawMessage, op string) (mcp.CallResult, bool) {
	fields, err := contract.Validate(contract.InputPath(t.Name), args)
	if err != nil {
		// The arguments were not JSON at all, or no schema is published for the tool (a server
		// bug the generator's tests rule out); either way the model can only be told its input
		// was bad.
		h.opts.Logger.Warn("validate arguments", "tool", t.Name, "err", err)
		fields = []contract.FieldError{{Pointer: "", Message: "arguments must be a JSON object"}}
	}
	if len(fields) == 0 {
		return mcp.CallResult{}, false
	}
	name := t.Name
	if op != "" {
		name = "operation " + op
	}
	te := toolerr.Newf(gen.ErrorCodeInvalidArguments, "invalid arguments for %s: %d field(s) failed validation", name, len(fields)).
		WithHint("fix the listed fields and call again; the tool's input schema gives every bound")
	// The validator's fields are the error's own type (contract.FieldError = gen.ErrorField);
	// they are only bounded here, as defs/error.json bounds them.
	te.Fields = fields[:min(len(fields), 50)]
	for i := range te.Fields {
		te.Fields[i].Message = capRunes(te.Fields[i].Message, 512)
	}
	return h.errorResult(te), true
}

// failure turns a flow error into a tool error result (domain failures, cancellation) or, for
// anything else, a generic internal error whose detail stays in the log.
func (h *Handler) failure(ctx context.Context, t gen.Tool, err error) (mcp.CallResult, error) {
	if te, ok := toolerr.As(err); ok {
		return h.errorResult(te), nil
	}
	var tooLarge *shape.TooLargeError
	if errors.As(err, &tooLarge) {
		return h.errorResult(toolerr.New(gen.ErrorCodeOutputTooLarge, tooLarge.Error()).WithHint(tooLarge.Hint())), nil
	}
	if errors.Is(err, shape.ErrCursorInvalid) {
		msg := "the cursor does not belong to this query or the data changed"
		var ce *shape.CursorError
		if errors.As(err, &ce) {
			msg = ce.Message()
		}
		return h.errorResult(toolerr.New(gen.ErrorCodeCursorInvalid, msg).WithHint(shape.CursorHint)), nil
	}
	if ctx.Err() != nil {
		return h.errorResult(toolerr.New(gen.ErrorCodeCancelled, "the call was cancelled")), nil
	}
	h.opts.Logger.Error("flow failed", "tool", t.Name, "err", err)
	return h.errorResult(toolerr.New(gen.ErrorCodeInternal, "runlens failed to answer; the server log has the details").WithRetryable()), nil
}

// errorResult renders a domain error as a tool error result, redacted like any answer.
func (h *Handler) errorResult(te *toolerr.Error) mcp.CallResult {
	raw, err := json.Marshal(te)
	if err != nil {
		raw = []byte(`{"code":"internal","message":"runlens failed to encode an error"}`)
	}
	if red, err := h.opts.Redactor.JSON(raw); err == nil {
		raw = red
	}
	return mcp.CallResult{Structured: raw, IsError: true}
}

// finish discloses an answer (shape.Disclose: redact, then fit) and validates what will be sent
// against the tool's published output schema.
func (h *Handler) finish(t gen.Tool, detail shape.Detail, raw []byte, paging *shape.Paging) (mcp.CallResult, error) {
	fitted, _, err := shape.Disclose(raw, detail, h.limits(t, detail), paging, h.opts.Redactor)
	if err != nil {
		var tooLarge *shape.TooLargeError
		if errors.As(err, &tooLarge) {
			return h.errorResult(toolerr.New(gen.ErrorCodeOutputTooLarge, tooLarge.Error()).WithHint(tooLarge.Hint())), nil
		}
		return mcp.CallResult{}, fmt.Errorf("%s output: %w", t.Name, err)
	}
	fields, err := contract.Validate(contract.OutputPath(t.Name), fitted)
	if err != nil || len(fields) > 0 {
		h.opts.Logger.Error("output failed its schema", "tool", t.Name, "fields", fields, "err", err)
		return mcp.CallResult{}, &mcp.Error{Code: mcp.CodeInternal, Message: "internal error: the " + t.Name + " answer failed its own output schema"}
	}
	return mcp.CallResult{Structured: fitted}, nil
}

// limits picks the byte bounds of one answer: the tool's own budgets from the registry, unless
// configuration overrides them.
func (h *Handler) limits(t gen.Tool, d shape.Detail) shape.Limits {
	b := h.opts.Budgets
	lim := shape.Limits{Budget: t.Budget.Standard, FullCeiling: b.FullCeiling, TailKeys: []string{"outputTail"}}
	large := t.Budget.Standard > shape.StandardBudget
	switch {
	case d == shape.Summary:
		lim.Budget = t.Budget.Summary
		if b.Summary > 0 {
			lim.Budget = b.Summary
		}
	case large && b.Large > 0:
		lim.Budget = b.Large
	case !large && b.Standard > 0:
		lim.Budget = b.Standard
	}
	return lim
}

// detailOf reads the detail argument of already-validated arguments; absent means standard.
func detailOf(args json.RawMessage) shape.Detail {
	var probe struct {
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(args, &probe)
	d, err := shape.ParseDetail(probe.Detail)
	if err != nil {
		return shape.Standard
	}
	return d
}

// capRunes bounds s to n runes.
func capRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// toolInfo describes t for tools/list.
func toolInfo(t gen.Tool) mcp.ToolInfo {
	return mcp.ToolInfo{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.ListedInputSchema,
		OutputSchema: t.ListedOutputSchema,
		Annotations: &mcp.Annotations{
			ReadOnlyHint:    t.Annotations.ReadOnlyHint,
			DestructiveHint: t.Annotations.DestructiveHint,
			IdempotentHint:  t.Annotations.IdempotentHint,
			OpenWorldHint:   t.Annotations.OpenWorldHint,
		},
	}
}
