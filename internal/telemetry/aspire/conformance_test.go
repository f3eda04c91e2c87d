package aspire_test

import (
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// serve loads d into a test dashboard that requires a key, and returns the engine over the
// adapter pointed at it.
func serve(t *testing.T, d *fixture.Dataset, o aspire.Options) (*aspiretest.Server, telemetry.Source) {
	t.Helper()
	srv := aspiretest.New(aspiretest.Options{APIKey: testKey, Token: testToken})
	t.Cleanup(srv.Close)
	srv.Load(d.Traces, d.Logs)
	o.Endpoint = srv.URL
	if o.APIKey == "" && o.Token == "" {
		o.APIKey = testKey
	}
	return srv, engine.New(aspire.New(o), d.Conventions)
}

const (
	testKey   = "k3y-0f-the-dashb0ard"
	testToken = "l0gin-t0ken"
)

// The engine over the Aspire adapter, reading a dashboard that sends every attribute value as
// a string and leaves unset statuses out, must give the fixture's answers: exit codes "1" and
// status codes "500" parse as the numbers the embedded store holds.
func TestTheEngineOverTheAspireDashboardConforms(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		_, src := serve(t, d, aspire.Options{})
		return src
	}, telemetrytest.Options{})
}
