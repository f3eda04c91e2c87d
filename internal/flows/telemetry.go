package flows

import (
	"context"

	"github.com/runlens/runlens/gen"
)

// GetAppStatus implements gen.Flows.
func (f *Flows) GetAppStatus(ctx context.Context, in gen.GetAppStatusInput) (gen.GetAppStatusOutput, error) {
	return gen.GetAppStatusOutput{}, notImplemented(gen.ToolGetAppStatus)
}

// ListRuns implements gen.Flows.
func (f *Flows) ListRuns(ctx context.Context, in gen.ListRunsInput) (gen.ListRunsOutput, error) {
	return gen.ListRunsOutput{}, notImplemented(gen.ToolListRuns)
}

// GetRun implements gen.Flows.
func (f *Flows) GetRun(ctx context.Context, in gen.GetRunInput) (gen.GetRunOutput, error) {
	return gen.GetRunOutput{}, notImplemented(gen.ToolGetRun)
}

// GetRecentErrors implements gen.Flows.
func (f *Flows) GetRecentErrors(ctx context.Context, in gen.GetRecentErrorsInput) (gen.GetRecentErrorsOutput, error) {
	return gen.GetRecentErrorsOutput{}, notImplemented(gen.ToolGetRecentErrors)
}

// GetLastJobResult implements gen.Flows.
func (f *Flows) GetLastJobResult(ctx context.Context, in gen.GetLastJobResultInput) (gen.GetLastJobResultOutput, error) {
	return gen.GetLastJobResultOutput{}, notImplemented(gen.ToolGetLastJobResult)
}

// AnalyzeServicePerformance implements gen.Flows.
func (f *Flows) AnalyzeServicePerformance(ctx context.Context, in gen.AnalyzeServicePerformanceInput) (gen.AnalyzeServicePerformanceOutput, error) {
	return gen.AnalyzeServicePerformanceOutput{}, notImplemented(gen.ToolAnalyzeServicePerformance)
}

// AnalyzeDBBottlenecks implements gen.Flows.
func (f *Flows) AnalyzeDBBottlenecks(ctx context.Context, in gen.AnalyzeDBBottlenecksInput) (gen.AnalyzeDBBottlenecksOutput, error) {
	return gen.AnalyzeDBBottlenecksOutput{}, notImplemented(gen.ToolAnalyzeDBBottlenecks)
}
