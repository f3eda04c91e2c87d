package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

func TestAnUnsupportedSourceAnswersEveryQuestionUnreachable(t *testing.T) {
	ctx := context.Background()
	u := unsupportedSource(telemetry.SourceInfo{Kind: "otlpfile", Endpoint: "x"})
	_, err := u.Status(ctx, telemetry.StatusQuery{})
	if !errors.Is(err, telemetry.ErrUnreachable) || !strings.Contains(err.Error(), "the otlpfile source is not supported") ||
		strings.Count(err.Error(), telemetry.ErrUnreachable.Error()) != 1 {
		t.Fatalf("status: %v; want one unreachable error naming the kind", err)
	}
	if _, err := u.Fingerprint(ctx); !errors.Is(err, telemetry.ErrUnreachable) {
		t.Fatalf("fingerprint: %v", err)
	}
	if info := u.Describe(ctx); info.Kind != "otlpfile" || info.Reachable {
		t.Fatalf("describe: %+v", info)
	}
}

func TestALazySourceOpensOnFirstUseAndRetriesAFailedOpen(t *testing.T) {
	ctx := context.Background()
	opens := 0
	l := &lazySource{info: telemetry.SourceInfo{Kind: "embedded"}, open: func(context.Context) (telemetry.Source, error) {
		if opens++; opens == 1 {
			return nil, errors.New("no store yet")
		}
		return engine.New(&memory.Backend{}, nil), nil
	}}
	if opens != 0 {
		t.Fatal("opened before the first question")
	}
	if _, err := l.Runs(ctx, telemetry.RunsQuery{}); !errors.Is(err, telemetry.ErrUnreachable) || !strings.Contains(err.Error(), "no store yet") {
		t.Fatalf("first question: %v; want the open failure as unreachable", err)
	}
	if _, err := l.Runs(ctx, telemetry.RunsQuery{}); err != nil {
		t.Fatalf("second question: %v; want the source opened on retry", err)
	}
	if _, err := l.Services(ctx, 5); err != nil || opens != 2 {
		t.Fatalf("third question: %v after %d opens; want the opened source kept", err, opens)
	}
}
