// Package callctx carries the per-call facilities a flow may use without depending on the
// transport: progress reporting (only when the client asked for it) and the paging hook the
// disclosure layer needs to re-mint a cursor when it drops items to fit a budget.
package callctx

import (
	"context"

	"github.com/runlens/runlens/internal/shape"
)

type progressKey struct{}
type pagingKey struct{}

// ProgressFunc reports progress; values must increase (the transport drops those that do not).
type ProgressFunc func(progress, total float64, message string)

// WithProgress returns a context whose flows can report progress through fn.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, fn)
}

// Progress reports progress if the caller asked for it, and does nothing otherwise.
func Progress(ctx context.Context, progress, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok {
		fn(progress, total, message)
	}
}

// pagingSlot is filled by the flow and read by the server after the flow returns.
type pagingSlot struct{ p *shape.Paging }

// WithPagingSlot returns a context in which a flow can record how its page is paged.
func WithPagingSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, pagingKey{}, &pagingSlot{})
}

// SetPaging records which collection the answer's page describes and how to re-mint its cursor
// when the disclosure layer drops items from it. It is a no-op outside a server call.
func SetPaging(ctx context.Context, p *shape.Paging) {
	if s, ok := ctx.Value(pagingKey{}).(*pagingSlot); ok {
		s.p = p
	}
}

// Paging returns what the flow recorded with SetPaging, or nil.
func Paging(ctx context.Context) *shape.Paging {
	if s, ok := ctx.Value(pagingKey{}).(*pagingSlot); ok {
		return s.p
	}
	return nil
}
