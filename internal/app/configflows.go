package app

import (
	"context"

	"github.com/runlens/runlens/gen"
)

// configInvalidFlows serves while the configuration file is invalid: doctor answers (it says
// what is wrong and how to fix it), every other tool answers config_invalid with the file's
// location and the fix, so an agent learns why instead of reading answers built on defaults
// the project never chose.
type configInvalidFlows struct{ a *App }

var _ gen.Flows = configInvalidFlows{}

func (f configInvalidFlows) GetAppStatus(context.Context, gen.GetAppStatusInput) (gen.GetAppStatusOutput, error) {
	return gen.GetAppStatusOutput{}, f.a.configError()
}

func (f configInvalidFlows) ListRuns(context.Context, gen.ListRunsInput) (gen.ListRunsOutput, error) {
	return gen.ListRunsOutput{}, f.a.configError()
}

func (f configInvalidFlows) GetRun(context.Context, gen.GetRunInput) (gen.GetRunOutput, error) {
	return gen.GetRunOutput{}, f.a.configError()
}

func (f configInvalidFlows) GetRecentErrors(context.Context, gen.GetRecentErrorsInput) (gen.GetRecentErrorsOutput, error) {
	return gen.GetRecentErrorsOutput{}, f.a.configError()
}

func (f configInvalidFlows) GetLastJobResult(context.Context, gen.GetLastJobResultInput) (gen.GetLastJobResultOutput, error) {
	return gen.GetLastJobResultOutput{}, f.a.configError()
}

func (f configInvalidFlows) AnalyzeServicePerformance(context.Context, gen.AnalyzeServicePerformanceInput) (gen.AnalyzeServicePerformanceOutput, error) {
	return gen.AnalyzeServicePerformanceOutput{}, f.a.configError()
}

func (f configInvalidFlows) AnalyzeDBBottlenecks(context.Context, gen.AnalyzeDBBottlenecksInput) (gen.AnalyzeDBBottlenecksOutput, error) {
	return gen.AnalyzeDBBottlenecksOutput{}, f.a.configError()
}

// Doctor answers as always: it is how the agent finds out what to fix.
func (f configInvalidFlows) Doctor(ctx context.Context, in gen.DoctorInput) (gen.DoctorOutput, error) {
	return f.a.Flows.Doctor(ctx, in)
}

func (f configInvalidFlows) SearchDocs(context.Context, gen.SearchDocsInput) (gen.SearchDocsOutput, error) {
	return gen.SearchDocsOutput{}, f.a.configError()
}

func (f configInvalidFlows) ListDocs(context.Context, gen.ListDocsInput) (gen.ListDocsOutput, error) {
	return gen.ListDocsOutput{}, f.a.configError()
}

func (f configInvalidFlows) GetDoc(context.Context, gen.GetDocInput) (gen.GetDocOutput, error) {
	return gen.GetDocOutput{}, f.a.configError()
}

func (f configInvalidFlows) ListCommands(context.Context, gen.ListCommandsInput) (gen.ListCommandsOutput, error) {
	return gen.ListCommandsOutput{}, f.a.configError()
}

func (f configInvalidFlows) ExecuteCommand(context.Context, gen.ExecuteCommandInput) (gen.ExecuteCommandOutput, error) {
	return gen.ExecuteCommandOutput{}, f.a.configError()
}
