package flows

import (
	"context"

	"github.com/runlens/runlens/gen"
)

// SearchDocs implements gen.Flows.
func (f *Flows) SearchDocs(ctx context.Context, in gen.SearchDocsInput) (gen.SearchDocsOutput, error) {
	return gen.SearchDocsOutput{}, notImplemented(gen.ToolSearchDocs)
}

// ListDocs implements gen.Flows.
func (f *Flows) ListDocs(ctx context.Context, in gen.ListDocsInput) (gen.ListDocsOutput, error) {
	return gen.ListDocsOutput{}, notImplemented(gen.ToolListDocs)
}

// GetDoc implements gen.Flows.
func (f *Flows) GetDoc(ctx context.Context, in gen.GetDocInput) (gen.GetDocOutput, error) {
	return gen.GetDocOutput{}, notImplemented(gen.ToolGetDoc)
}
