package app

import (
	"context"
	"os"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/aspire"
)

// aspireSource reads the Aspire dashboard's telemetry API. The API key and the login token are
// read from the variables the configuration names, here and nowhere else: they stay in this
// process's memory, out of answers, logs and the commands' environment (config.Load marks
// both variables secret).
func (a *App) aspireSource() telemetry.Source {
	t := a.Config.Telemetry
	o := aspire.Options{
		Endpoint:      t.Source.Endpoint,
		Fallback:      t.Source.Fallback,
		APIKeyEnv:     t.APIKeyEnv,
		TokenEnv:      t.TokenEnv,
		TrustDevCerts: true,
		Logger:        a.Logger,
	}
	if t.APIKeyEnv != "" {
		o.APIKey = os.Getenv(t.APIKeyEnv)
	}
	if t.TokenEnv != "" {
		o.Token = os.Getenv(t.TokenEnv)
	}
	info := telemetry.SourceInfo{Kind: aspire.Kind, Endpoint: t.Source.Endpoint}
	return &lazySource{open: func(ctx context.Context) (telemetry.Source, error) {
		conv, err := a.conventions()
		if err != nil {
			return nil, err
		}
		return engine.New(aspire.New(o), conv), nil
	}, info: info}
}
