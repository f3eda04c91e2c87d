package flows

import (
	"context"

	"github.com/runlens/runlens/gen"
)

// ListCommands implements gen.Flows.
func (f *Flows) ListCommands(ctx context.Context, in gen.ListCommandsInput) (gen.ListCommandsOutput, error) {
	return gen.ListCommandsOutput{}, notImplemented(gen.ToolListCommands)
}

// ExecuteCommand implements gen.Flows.
func (f *Flows) ExecuteCommand(ctx context.Context, in gen.ExecuteCommandInput) (gen.ExecuteCommandOutput, error) {
	return gen.ExecuteCommandOutput{}, notImplemented(gen.ToolExecuteCommand)
}
