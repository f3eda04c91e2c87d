package flows

import (
	"context"
	"fmt"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/stack"
)

// Frames shown per error span of get_run: a few in a standard answer, more in full.
const (
	standardFrames = 3
	fullFrames     = 20
)

// project is the workspace that stack frames are mapped onto; nil when there is none (then
// answers simply carry no locations).
func (f *Flows) project(ctx context.Context) *stack.Project {
	if f.Stacks == nil {
		return nil
	}
	return f.Stacks(ctx)
}

// locateGroups fills each error group's location — the innermost in-project frame of its most
// recent occurrence's origin — and, at full detail, the source line it points at.
func (f *Flows) locateGroups(ctx context.Context, src telemetry.Source, groups []telemetry.ErrorGroup, full bool) (locs, snippets []string) {
	locs, snippets = make([]string, len(groups)), make([]string, len(groups))
	p := f.project(ctx)
	if p == nil {
		return locs, snippets
	}
	refs := make([]telemetry.SpanRef, 0, len(groups))
	for _, g := range groups {
		if g.SampleSpanID != "" {
			refs = append(refs, telemetry.SpanRef{TraceID: g.SampleTraceID, SpanID: g.SampleSpanID})
		}
	}
	if len(refs) == 0 {
		return locs, snippets
	}
	spans, err := src.SampleSpans(ctx, refs)
	if err != nil { // locations are a help, not the answer: leave them out
		return locs, snippets
	}
	byRef := make(map[telemetry.SpanRef]*telemetry.SpanRow, len(spans))
	for i := range spans {
		byRef[telemetry.SpanRef{TraceID: spans[i].TraceID, SpanID: spans[i].SpanID}] = &spans[i]
	}
	for i, g := range groups {
		s := byRef[telemetry.SpanRef{TraceID: g.SampleTraceID, SpanID: g.SampleSpanID}]
		if s == nil {
			continue
		}
		t := p.ResolveSpan(s)
		if t.Location == nil {
			continue
		}
		locs[i] = t.Location.String()
		if full {
			snippets[i] = f.snippet(p, *t.Location)
		}
	}
	return locs, snippets
}

// snippet is the source line a location points at ("45: return total * rate"), or "" when it
// is refused (a secret or ignored file, a link, a line that is not there).
func (f *Flows) snippet(p *stack.Project, loc stack.Location) string {
	sn := p.Snippet(loc, 0, f.redact)
	if !sn.OK() {
		return ""
	}
	var b strings.Builder
	for _, l := range sn.Lines {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d: %s", l.Number, strings.TrimRight(l.Text, " \t"))
	}
	return b.String()
}

// locateSpan reads where an error span failed: its location in the project and its top frames
// (in-project first).
func (f *Flows) locateSpan(p *stack.Project, s *telemetry.SpanRow, frames int) (string, []string) {
	if p == nil || s == nil {
		return "", nil
	}
	t := p.ResolveSpan(s)
	var out []string
	for _, fr := range t.Top(frames) {
		out = append(out, fr.String())
	}
	if t.Location == nil {
		return "", out
	}
	return t.Location.String(), out
}
