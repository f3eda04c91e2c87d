package app

import (
	"context"
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

// get returns the opened source. A failure the user can act on is already a tool error (a
// source store that does not exist) and is passed on as it is; any other is an unreachable
// source.
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
	if _, ok := toolerr.As(err); ok {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", telemetry.ErrUnreachable, err)
	}
	l.src.Store(&src)
	return src, nil
}

func (l *lazySource) Status(ctx context.Context, q telemetry.StatusQuery) (telemetry.Status, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.Status{}, err
	}
	return s.Status(ctx, q)
}

func (l *lazySource) Runs(ctx context.Context, q telemetry.RunsQuery) (telemetry.RunPage, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.RunPage{}, err
	}
	return s.Runs(ctx, q)
}

func (l *lazySource) Run(ctx context.Context, q telemetry.RunQuery) (telemetry.Run, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.Run{}, err
	}
	return s.Run(ctx, q)
}

func (l *lazySource) Errors(ctx context.Context, q telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.ErrorReport{}, err
	}
	return s.Errors(ctx, q)
}

func (l *lazySource) LastJob(ctx context.Context, q telemetry.JobQuery) (telemetry.JobResult, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.JobResult{}, err
	}
	return s.LastJob(ctx, q)
}

func (l *lazySource) ServicePerformance(ctx context.Context, q telemetry.PerformanceQuery) (telemetry.Performance, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.Performance{}, err
	}
	return s.ServicePerformance(ctx, q)
}

func (l *lazySource) DBOperations(ctx context.Context, q telemetry.DBQuery) (telemetry.DBReport, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.DBReport{}, err
	}
	return s.DBOperations(ctx, q)
}

func (l *lazySource) Services(ctx context.Context, limit int) ([]string, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Services(ctx, limit)
}

func (l *lazySource) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.Snapshot{}, err
	}
	return s.Fingerprint(ctx)
}

func (l *lazySource) Describe(ctx context.Context) telemetry.SourceInfo {
	s, err := l.get(ctx)
	if err != nil {
		info := l.info
		info.Reachable = false
		return info
	}
	return s.Describe(ctx)
}

func (l *lazySource) Instrumentation(ctx context.Context, q telemetry.InstrumentationQuery) (telemetry.Instrumentation, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.Instrumentation{}, err
	}
	return s.Instrumentation(ctx, q)
}

func (l *lazySource) SampleSpans(ctx context.Context, refs []telemetry.SpanRef) ([]telemetry.SpanRow, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.SampleSpans(ctx, refs)
}

func (l *lazySource) Invocation(ctx context.Context, q telemetry.InvocationQuery) (telemetry.InvocationReport, error) {
	s, err := l.get(ctx)
	if err != nil {
		return telemetry.InvocationReport{}, err
	}
	return s.Invocation(ctx, q)
}

// CoverageNote implements telemetry.Coverage for the opened source; nothing is said before it
// opens.
func (l *lazySource) CoverageNote() string {
	if s := l.src.Load(); s != nil {
		return telemetry.CoverageNote(*s)
	}
	return ""
}

// unsupportedSource stands for a configured backend this build cannot read: every query says
// so as an unreachable source, which the tools and the doctor report with a fix.
type unsupportedSource struct{ info telemetry.SourceInfo }

var _ telemetry.Source = unsupportedSource{}

func (u unsupportedSource) err() error {
	return fmt.Errorf("%w: the %s source is not supported by this build; use the embedded store (sqlite:PATH)", telemetry.ErrUnreachable, u.info.Kind)
}

func (u unsupportedSource) Status(context.Context, telemetry.StatusQuery) (telemetry.Status, error) {
	return telemetry.Status{}, u.err()
}
func (u unsupportedSource) Runs(context.Context, telemetry.RunsQuery) (telemetry.RunPage, error) {
	return telemetry.RunPage{}, u.err()
}
func (u unsupportedSource) Run(context.Context, telemetry.RunQuery) (telemetry.Run, error) {
	return telemetry.Run{}, u.err()
}
func (u unsupportedSource) Errors(context.Context, telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	return telemetry.ErrorReport{}, u.err()
}
func (u unsupportedSource) LastJob(context.Context, telemetry.JobQuery) (telemetry.JobResult, error) {
	return telemetry.JobResult{}, u.err()
}
func (u unsupportedSource) ServicePerformance(context.Context, telemetry.PerformanceQuery) (telemetry.Performance, error) {
	return telemetry.Performance{}, u.err()
}
func (u unsupportedSource) DBOperations(context.Context, telemetry.DBQuery) (telemetry.DBReport, error) {
	return telemetry.DBReport{}, u.err()
}
func (u unsupportedSource) Services(context.Context, int) ([]string, error) { return nil, u.err() }
func (u unsupportedSource) Fingerprint(context.Context) (telemetry.Snapshot, error) {
	return telemetry.Snapshot{}, u.err()
}
func (u unsupportedSource) Describe(context.Context) telemetry.SourceInfo { return u.info }
func (u unsupportedSource) SampleSpans(context.Context, []telemetry.SpanRef) ([]telemetry.SpanRow, error) {
	return nil, u.err()
}
func (u unsupportedSource) Invocation(context.Context, telemetry.InvocationQuery) (telemetry.InvocationReport, error) {
	return telemetry.InvocationReport{}, u.err()
}
func (u unsupportedSource) Instrumentation(context.Context, telemetry.InstrumentationQuery) (telemetry.Instrumentation, error) {
	return telemetry.Instrumentation{}, u.err()
}
