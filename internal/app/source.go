package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/toolerr"
)

// lazySource opens its backend on first use, so start-up pays nothing for telemetry, and an
// open failure is reported as an unreachable source by every query rather than stopping the
// server. A failed open is tried again by the next query, so a store created later (or a
// backend started later) is picked up without a restart.
type lazySource struct {
	open func(ctx context.Context) (telemetry.Source, error)
	info telemetry.SourceInfo

	mu  sync.Mutex // serialises opening
	src atomic.Pointer[telemetry.Source]
}

var _ telemetry.Source = (*lazySource)(nil)

// unsupportedSource stands for a configured backend this build cannot read: every query says
// so as an unreachable source, which the tools and the doctor report with a fix.
func unsupportedSource(info telemetry.SourceInfo) *lazySource {
	return &lazySource{info: info, open: func(context.Context) (telemetry.Source, error) {
		return nil, fmt.Errorf("%w: the %s source is not supported by this build; use the embedded store (sqlite:PATH)", telemetry.ErrUnreachable, info.Kind)
	}}
}

// get returns the opened source. A failure the user can act on is already a tool error (a
// source store that does not exist) or says the source is unreachable, and is passed on as it
// is; any other is an unreachable source.
func (l *lazySource) get(ctx context.Context) (telemetry.Source, error) {
	if s := l.src.Load(); s != nil {
		return *s, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.src.Load(); s != nil {
		return *s, nil
	}
	src, err := l.open(ctx)
	if _, ok := toolerr.As(err); ok || errors.Is(err, telemetry.ErrUnreachable) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", telemetry.ErrUnreachable, err)
	}
	l.src.Store(&src)
	return src, nil
}

// call asks the opened source a question: f is the telemetry.Source method, as a method
// expression.
func call[Q, R any](ctx context.Context, l *lazySource, q Q, f func(telemetry.Source, context.Context, Q) (R, error)) (R, error) {
	s, err := l.get(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	return f(s, ctx, q)
}

func (l *lazySource) Status(ctx context.Context, q telemetry.StatusQuery) (telemetry.Status, error) {
	return call(ctx, l, q, telemetry.Source.Status)
}

func (l *lazySource) Runs(ctx context.Context, q telemetry.RunsQuery) (telemetry.RunPage, error) {
	return call(ctx, l, q, telemetry.Source.Runs)
}

func (l *lazySource) Run(ctx context.Context, q telemetry.RunQuery) (telemetry.Run, error) {
	return call(ctx, l, q, telemetry.Source.Run)
}

func (l *lazySource) Errors(ctx context.Context, q telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	return call(ctx, l, q, telemetry.Source.Errors)
}

func (l *lazySource) LastJob(ctx context.Context, q telemetry.JobQuery) (telemetry.JobResult, error) {
	return call(ctx, l, q, telemetry.Source.LastJob)
}

func (l *lazySource) ServicePerformance(ctx context.Context, q telemetry.PerformanceQuery) (telemetry.Performance, error) {
	return call(ctx, l, q, telemetry.Source.ServicePerformance)
}

func (l *lazySource) DBOperations(ctx context.Context, q telemetry.DBQuery) (telemetry.DBReport, error) {
	return call(ctx, l, q, telemetry.Source.DBOperations)
}

func (l *lazySource) Services(ctx context.Context, limit int) ([]string, error) {
	return call(ctx, l, limit, telemetry.Source.Services)
}

func (l *lazySource) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	return call(ctx, l, struct{}{}, func(s telemetry.Source, ctx context.Context, _ struct{}) (telemetry.Snapshot, error) {
		return s.Fingerprint(ctx)
	})
}

func (l *lazySource) Instrumentation(ctx context.Context, q telemetry.InstrumentationQuery) (telemetry.Instrumentation, error) {
	return call(ctx, l, q, telemetry.Source.Instrumentation)
}

func (l *lazySource) SampleSpans(ctx context.Context, refs []telemetry.SpanRef) ([]telemetry.SpanRow, error) {
	return call(ctx, l, refs, telemetry.Source.SampleSpans)
}

func (l *lazySource) Invocation(ctx context.Context, q telemetry.InvocationQuery) (telemetry.InvocationReport, error) {
	return call(ctx, l, q, telemetry.Source.Invocation)
}

// Describe says what the opened source says of itself; before it opens, or when it cannot, the
// configured kind and endpoint, unreachable.
func (l *lazySource) Describe(ctx context.Context) telemetry.SourceInfo {
	s, err := l.get(ctx)
	if err != nil {
		info := l.info
		info.Reachable = false
		return info
	}
	return s.Describe(ctx)
}

// CoverageNote implements telemetry.Coverage for the opened source; nothing is said before it
// opens.
func (l *lazySource) CoverageNote() string {
	if s := l.src.Load(); s != nil {
		return telemetry.CoverageNote(*s)
	}
	return ""
}
