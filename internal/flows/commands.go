package flows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// maxCommandChoices bounds the known commands a command_not_found error suggests.
const maxCommandChoices = 10

// ListCommands implements gen.Flows: one page of the catalog, sorted by path, each command with
// the policy's verdict for calling it without arguments and the rule that decided it.
func (f *Flows) ListCommands(ctx context.Context, in gen.ListCommandsInput) (gen.ListCommandsOutput, error) {
	if f.Commands == nil {
		return gen.ListCommandsOutput{Page: gen.Page{Total: ptr[int64](0)}}, nil
	}
	catalog := f.Commands.Catalog()
	fp := catalog.Fingerprint()
	offset := 0
	if in.Cursor != nil && *in.Cursor != "" {
		var err error
		if offset, err = f.Cursors.Decode(*in.Cursor, gen.ToolListCommands, in, fp); err != nil {
			return gen.ListCommandsOutput{}, err
		}
	}
	var matching []commands.Command
	filter := strings.ToLower(deref(in.Filter))
	for _, c := range catalog.Commands() {
		if strings.Contains(strings.ToLower(c.Path), filter) {
			matching = append(matching, c)
		}
	}
	total := int64(len(matching))
	if in.Detail == gen.DetailSummary {
		return gen.ListCommandsOutput{Page: gen.Page{Total: &total, Truncated: total > 0}}, nil
	}
	limit := in.Limit
	page := matching[min(offset, len(matching)):min(offset+limit, len(matching))]
	policy := f.Commands.Policy()
	out := gen.ListCommandsOutput{Commands: make([]gen.ListCommandsOutputCommand, 0, len(page))}
	for _, c := range page {
		d := policy.Decide(catalog, c.Path, nil)
		usage := c.Usage
		if usage == "" {
			usage = c.Path
		}
		out.Commands = append(out.Commands, gen.ListCommandsOutputCommand{
			Path: c.Path, Description: c.Description, Usage: usage, Allowed: d.Allowed, Rule: d.Rule,
		})
	}
	returned := len(out.Commands)
	out.Count = int64(returned)
	out.Page = gen.Page{Returned: out.Count, Total: &total}
	remint := func(returned int) (string, error) {
		return f.Cursors.Encode(gen.ToolListCommands, in, fp, offset+returned)
	}
	if next := offset + returned; returned > 0 && next < len(matching) {
		if c, err := remint(returned); err == nil {
			out.Page.NextCursor = &c
		}
	}
	callctx.SetPaging(ctx, &shape.Paging{Field: "commands", Count: "count", Remint: remint})
	return out, nil
}

// ExecuteCommand implements gen.Flows: the policy decides first, so a denied or unknown command
// starts nothing; an allowed one runs with its timeout capped by the configuration, reporting
// progress when the client asked for it, and its output tail is redacted before it is returned.
func (f *Flows) ExecuteCommand(ctx context.Context, in gen.ExecuteCommandInput) (gen.ExecuteCommandOutput, error) {
	if f.Commands == nil {
		return gen.ExecuteCommandOutput{}, toolerr.New(gen.ErrorCodeCommandNotFound, "no command catalog is configured").
			WithHint("a person can declare commands in runlens.json")
	}
	var requested time.Duration
	if in.TimeoutMs != nil {
		requested = time.Duration(*in.TimeoutMs) * time.Millisecond
	}
	var timeout time.Duration // the progress total; unknown commands never start
	if cmd, ok := f.Commands.Lookup(in.Command); ok {
		timeout = f.Commands.Timeout(cmd, requested)
	}
	tel := f.commandTelemetry(ctx)
	started := f.Now()
	res, err := f.Commands.Execute(ctx, in.Command, in.Args, commands.ExecuteOptions{
		Timeout: requested,
		Progress: func(elapsed time.Duration, bytes int64) {
			callctx.Progress(ctx, elapsed.Seconds(), timeout.Seconds(),
				fmt.Sprintf("%s: running for %s, %d bytes of output", in.Command, elapsed.Truncate(time.Second), bytes))
		},
		Env: tel.env,
	})
	if err != nil {
		return gen.ExecuteCommandOutput{}, commandErr(err, in.Command, f.Commands.Catalog())
	}
	out := gen.ExecuteCommandOutput{
		ExitCode:   res.ExitCode,
		DurationMs: float64(res.Duration.Microseconds()) / 1000,
		Truncated:  res.Truncated,
		TimedOut:   res.TimedOut,
		Cancelled:  res.Cancelled,
		Status:     gen.ExecuteCommandOutputStatusFail,
	}
	if res.ExitCode == 0 && !res.TimedOut && !res.Cancelled {
		out.Status = gen.ExecuteCommandOutputStatusPass
	}
	if in.Detail == gen.DetailSummary {
		// Decisions only: the exit status, not the output.
		out.Truncated = res.TotalBytes > 0
		return out, nil
	}
	out.OutputTail = f.redact(toValidUTF8(res.Tail))
	out.Telemetry, out.TelemetryNote = tel.report(ctx, f, started, in.Detail == gen.DetailFull)
	return out, nil
}

// commandErr maps the commands port's refusals onto the contract's error codes.
func commandErr(err error, requested string, catalog *commands.Catalog) error {
	var denied *commands.DeniedError
	switch {
	case errors.As(err, &denied):
		return toolerr.Newf(gen.ErrorCodeCommandDenied, "%s was denied by policy rule %s; nothing was started",
			quoteForMessage(requested), denied.Decision.Rule).WithHint(denied.Decision.Reason)
	case errors.Is(err, commands.ErrNotFound):
		return toolerr.Newf(gen.ErrorCodeCommandNotFound, "%s is not in the command catalog; nothing was started",
			quoteForMessage(requested)).
			WithHint("call list_commands to see the commands that exist and which are allowed").
			WithChoices(commandChoices(requested, catalog))
	case errors.Is(err, commands.ErrStart):
		return toolerr.New(gen.ErrorCodeCommandFailed, err.Error()).
			WithHint("the catalog entry's program is missing or not executable; run the doctor tool or ask a person to fix runlens.json")
	}
	return fmt.Errorf("execute command: %w", err)
}

// commandChoices suggests catalog paths for a path that is not in it: those sharing its first
// token, else the first few, so the model can correct a near miss without another call.
func commandChoices(requested string, catalog *commands.Catalog) []string {
	first, _, _ := strings.Cut(strings.TrimSpace(requested), " ")
	var same, all []string
	for _, c := range catalog.Commands() {
		if len(all) < maxCommandChoices {
			all = append(all, c.Path)
		}
		if cf, _, _ := strings.Cut(c.Path, " "); first != "" && strings.EqualFold(cf, first) && len(same) < maxCommandChoices {
			same = append(same, c.Path)
		}
	}
	if len(same) > 0 {
		return same
	}
	return all
}

// redact scrubs secrets from text the flow builds itself; the server redacts the whole answer
// again on the way out.
func (f *Flows) redact(s string) string {
	if f.Redactor == nil {
		return s
	}
	return f.Redactor.String(s)
}

// toValidUTF8 turns raw command output into a string JSON can carry unchanged.
func toValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// quoteForMessage quotes a caller-supplied value for an error message, bounded.
func quoteForMessage(s string) string {
	const limit = 80
	if r := []rune(s); len(r) > limit {
		return fmt.Sprintf("%q…", string(r[:limit]))
	}
	return fmt.Sprintf("%q", s)
}
