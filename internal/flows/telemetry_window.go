package flows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/toolerr"
)

// maxWindow is the longest window a telemetry tool covers (CONTRACTS.md: max 7d).
const maxWindow = 7 * 24 * time.Hour

// parseDuration reads a window string such as 15m, 2h or 1d.
func parseDuration(s string) (time.Duration, bool) {
	if len(s) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 {
		return 0, false
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// resolveWindow turns sinceUnixMs (which wins) or a window string into [start, now]; the end
// is one millisecond past now so data stamped now is inside. The window's default is the
// schema's, applied by the generated decoder before the flow runs.
func (f *Flows) resolveWindow(window string, since *int64) (telemetry.Window, error) {
	now := f.Now().UnixMilli()
	end := now + 1
	if since != nil {
		start := *since
		switch {
		case start > now:
			return telemetry.Window{}, invalidArg("/sinceUnixMs", "must not be in the future")
		case time.Duration(now-start)*time.Millisecond > maxWindow:
			return telemetry.Window{}, invalidArg("/sinceUnixMs", "must be within the last 7 days")
		}
		return telemetry.Window{StartMs: start, EndMs: end}, nil
	}
	d, ok := parseDuration(window)
	if !ok {
		return telemetry.Window{}, invalidArg("/window", "must be a duration such as 15m, 2h or 1d")
	}
	if d > maxWindow {
		return telemetry.Window{}, invalidArg("/window", "must be at most 7d")
	}
	return telemetry.Window{StartMs: now - d.Milliseconds(), EndMs: end}, nil
}

// invalidArg is an invalid_arguments error naming one field.
func invalidArg(pointer, message string) error {
	e := toolerr.Newf(gen.ErrorCodeInvalidArguments, "%s %s", pointer, message)
	e.Fields = []toolerr.Field{{Pointer: pointer, Message: message}}
	return e
}

// source returns the telemetry port or the error a tool answers without one.
func (f *Flows) source() (telemetry.Source, error) {
	if f.Telemetry == nil {
		return nil, toolerr.New(gen.ErrorCodeSourceUnreachable, "no telemetry source is configured").
			WithHint("run the doctor tool to see how telemetry is wired")
	}
	return f.Telemetry, nil
}

// telemetryErr maps the port's errors to tool errors; anything else stays a Go error (internal).
func telemetryErr(err error) error {
	if e, ok := unknownNameErr(err); ok {
		return e
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shape.ErrCursorInvalid):
		return err
	case errors.As(err, new(*telemetry.SourceError)):
		// A remote source said what went wrong and how to fix it; its message holds no
		// credential (see telemetry.SourceError).
		var se *telemetry.SourceError
		errors.As(err, &se)
		te := toolerr.New(gen.ErrorCodeSourceUnreachable, se.Message).WithHint(se.Hint)
		if errors.Is(err, telemetry.ErrUnreachable) {
			te = te.WithRetryable()
		}
		return te
	case errors.Is(err, telemetry.ErrRefused):
		return toolerr.New(gen.ErrorCodeSourceUnreachable, "the telemetry source refused the request").
			WithHint("run the doctor tool to check the source's credentials")
	case errors.Is(err, telemetry.ErrUnreachable):
		return toolerr.New(gen.ErrorCodeSourceUnreachable, "the telemetry source did not answer").
			WithHint("run the doctor tool to check the source").WithRetryable()
	default:
		return fmt.Errorf("query telemetry: %w", err)
	}
}

// pageCursor decodes a cursor (nil: the first page) bound to tool, its arguments and the
// snapshot; an empty fingerprint cannot be bound, so such a source serves first pages only.
func (f *Flows) pageCursor(cursor *string, tool string, in any, snap telemetry.Snapshot) (int, error) {
	if cursor == nil || *cursor == "" {
		return 0, nil
	}
	return f.Cursors.Decode(*cursor, tool, in, snap.ID)
}

// page builds the page object of returned items out of total, with the next cursor when more
// remain. Offsets and lengths are Go ints; the page's counts are the schema's int64.
func (f *Flows) page(tool string, in any, snap telemetry.Snapshot, offset, returned, total int, dropped bool) gen.Page {
	p := gen.Page{Returned: int64(returned), Total: ptr(int64(total)), Truncated: dropped}
	if next := offset + returned; returned > 0 && next < total {
		if c, err := f.Cursors.Encode(tool, in, snap.ID, next); err == nil {
			p.NextCursor = &c
		}
	}
	return p
}

// scanOut maps the port's scan, with the source's coverage note.
func (f *Flows) scanOut(s telemetry.Scan) gen.Scan {
	return gen.Scan{Limited: s.Limited, Scanned: s.Scanned, WindowStartUnixMs: s.WindowStartMs, WindowEndUnixMs: s.WindowEndMs,
		Note: optStr(telemetry.CoverageNote(f.Telemetry))}
}

// derefStatus returns the run status filter, "" for none.
func derefStatus(p *gen.RunStatus) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// deref returns *p or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// optStr returns a pointer to s, or nil for "".
func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptr[T any](v T) *T { return &v }

// setPaging tells the disclosure layer which collection the page describes, so that when it
// drops items to fit the byte budget, the next cursor starts right after the last item sent.
func (f *Flows) setPaging(ctx context.Context, field, count, tool string, in any, snap telemetry.Snapshot, offset int) {
	callctx.SetPaging(ctx, &shape.Paging{Field: field, Count: count, Remint: func(returned int) (string, error) {
		return f.Cursors.Encode(tool, in, snap.ID, offset+returned)
	}})
}

// unlessEqual returns a pointer to s, or nil when s is empty or repeats other: an answer never
// carries the same value twice under two names (a trace id that is the run id).
func unlessEqual(s, other string) *string {
	if s == other {
		return nil
	}
	return optStr(s)
}

// unlessSame returns ids, or nil when they are the same list as other (the trace ids of runs
// whose run id is their trace id).
func unlessSame(ids, other []string) []string {
	if slices.Equal(ids, other) {
		return nil
	}
	return ids
}
