package app

import (
	"context"
	"fmt"
	"os"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/doctor"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/toolerr"
)

// clickhouseSource reads the OpenTelemetry Collector exporter's tables in ClickHouse. It
// opens lazily like the embedded store, so a server started later is picked up.
func (a *App) clickhouseSource() telemetry.Source {
	tel := a.Config.Telemetry
	return &lazySource{open: func(ctx context.Context) (telemetry.Source, error) {
		conv, err := a.conventions()
		if err != nil {
			return nil, err
		}
		b, err := a.clickhouseBackend()
		if err != nil {
			return nil, err
		}
		return engine.New(b, conv), nil
	}, info: telemetry.SourceInfo{Kind: "clickhouse", Endpoint: tel.Source.String()}}
}

// clickhouseChecks are the doctor's checks of the ClickHouse source: the password variable,
// then what the backend diagnoses.
func (a *App) clickhouseChecks(ctx context.Context) []doctor.Check {
	b, err := a.clickhouseBackend()
	if err != nil {
		te, _ := toolerr.As(err)
		c := doctor.Check{Name: "clickhouse_config", Status: doctor.Fail, Summary: "The ClickHouse source is not usable as configured.", Fix: "Check telemetry.source and telemetry.passwordEnv."}
		if te != nil {
			c.Summary, c.Fix = te.Message+".", te.HintText()+"."
		}
		return []doctor.Check{c}
	}
	defer b.Close()
	var out []doctor.Check
	for _, f := range b.Diagnose(ctx) {
		out = append(out, doctor.Check{Name: f.Name, Status: doctor.Status(f.Status), Summary: f.Summary, Fix: f.Fix})
	}
	return out
}

// clickhouseBackend opens the configured ClickHouse backend.
func (a *App) clickhouseBackend() (*clickhouse.Backend, error) {
	tel := a.Config.Telemetry
	password, err := clickhousePassword(tel.PasswordEnv, tel.APIKeyEnv, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	b, err := clickhouse.Open(clickhouse.Options{Source: tel.Source.Endpoint, Password: password,
		TracesTable: tel.TracesTable, LogsTable: tel.LogsTable, Logger: a.Logger})
	if err != nil {
		return nil, toolerr.New(gen.ErrorCodeConfigInvalid, err.Error()).
			WithHint("telemetry.source: clickhouse://HOST:9000/DATABASE or clickhouse+http(s)://HOST:8123/DATABASE, the password in the variable named by telemetry.passwordEnv")
	}
	return b, nil
}

// clickhousePassword reads the password from the variable passwordEnv names (else
// apiKeyEnv's); none named is no password. A named variable that is unset is an error that
// says which, never its value.
func clickhousePassword(passwordEnv, apiKeyEnv string, lookup func(string) (string, bool)) (string, error) {
	name := passwordEnv
	if name == "" {
		name = apiKeyEnv
	}
	if name == "" {
		return "", nil
	}
	v, ok := lookup(name)
	if !ok || v == "" {
		return "", toolerr.New(gen.ErrorCodeSourceUnreachable, fmt.Sprintf("the ClickHouse password variable %s is not set", name)).
			WithHint(fmt.Sprintf("export %s in the environment runlens starts in (the MCP host's server entry), or remove telemetry.passwordEnv for a user without a password", name))
	}
	return v, nil
}
