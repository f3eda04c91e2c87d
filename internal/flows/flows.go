// Package flows implements gen.Flows: one method per tool, each calling a domain package through
// its port and mapping the answer onto the generated contract types. The methods live in one file
// per tool family (telemetry.go, doctor.go, docs.go, commands.go).
package flows

import (
	"context"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/stack"
)

// Deps are the ports the flows read. A nil port makes its tools answer with a domain error that
// says what is missing, never a crash.
type Deps struct {
	// Telemetry is the configured telemetry source.
	Telemetry telemetry.Source
	// Docs is the project's Markdown corpus.
	Docs *docs.Corpus
	// Commands runs allowlisted project commands.
	Commands *commands.Runner
	// Doctor runs the workspace checks.
	Doctor Doctor
	// Receivers say who receives OTLP on the project's receiver addresses (OTLP/HTTP first),
	// for get_app_status.source.receivers; nil, or none, leaves it out.
	Receivers func(ctx context.Context) []gen.GetAppStatusOutputSourceReceiver
	// Redactor scrubs secrets from text a flow builds itself (command output); the server
	// redacts every answer again on the way out.
	Redactor *shape.Redactor
	// Cursors mints and checks the opaque page cursors of every tool; the app keys it from the
	// project's key file so cursors survive a restart.
	Cursors *shape.Codec
	// Stacks maps recorded stack traces onto the project's files (opened once, on first use);
	// nil, or a nil answer, leaves locations out of the answers.
	Stacks func(ctx context.Context) *stack.Project
	// TelemetryGrace is how long execute_command waits after a command ends for its
	// telemetry to arrive (it stops sooner once nothing new arrives); zero answers at once.
	TelemetryGrace time.Duration
	// Now is the clock; tests pin it.
	Now func() time.Time
}

// Flows implements gen.Flows over Deps.
type Flows struct {
	Deps
}

var _ gen.Flows = (*Flows)(nil)

// New returns the flows over d, filling in the clock and, when unset, a codec with a per-process
// cursor key (tests, and flows built without a project).
func New(d Deps) *Flows {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Cursors == nil {
		d.Cursors = shape.NewCodec(nil)
	}
	return &Flows{Deps: d}
}
