package flows

import (
	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/toolerr"
)

// notImplemented is the answer of a tool whose flow is not written yet: a domain error the model
// can read, never a crash.
func notImplemented(tool string) error {
	return toolerr.Newf(gen.ErrorCodeNotImplemented, "%s is not implemented in this build", tool)
}
