package flows

import (
	"context"

	"github.com/runlens/runlens/gen"
)

// Doctor is the port of the doctor tool: it runs every check family (or one) and returns the
// verdict in contract form.
type Doctor interface {
	Run(ctx context.Context, in gen.DoctorInput) (gen.DoctorOutput, error)
}

// Doctor implements gen.Flows.
func (f *Flows) Doctor(ctx context.Context, in gen.DoctorInput) (gen.DoctorOutput, error) {
	if f.Deps.Doctor == nil {
		return gen.DoctorOutput{}, notImplemented(gen.ToolDoctor)
	}
	return f.Deps.Doctor.Run(ctx, in)
}
