package app

import (
	"context"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/doctor"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// appDoctor runs the doctor families over an App's parts.
type appDoctor struct{ a *App }

var _ flows.Doctor = appDoctor{}

func newDoctor(a *App) flows.Doctor { return appDoctor{a: a} }

// Deps returns what the doctor examines.
func (d appDoctor) deps() doctor.Deps {
	a := d.a
	cfg := a.Config
	deps := doctor.Deps{
		ProjectRoot:     cfg.ProjectRoot,
		ConfigFile:      cfg.File,
		Telemetry:       a.Flows.Telemetry,
		SourceEndpoint:  d.endpoint(),
		ReceiverAddr:    cfg.Receiver.Address,
		ReceiverEnabled: cfg.Receiver.Enabled,
		Receiver: func(ctx context.Context) doctor.Receiver {
			s := a.ReceiverStatus(ctx)
			return doctor.Receiver{State: string(s.State), Note: s.Note, Fix: s.Fix, Disabled: !cfg.Receiver.Enabled}
		},
		GRPCReceiver: func(ctx context.Context) doctor.Receiver {
			s := a.GRPCReceiverStatus(ctx)
			return doctor.Receiver{State: string(s.State), Note: s.Note, Fix: s.Fix, Disabled: !cfg.Receiver.GRPCEnabled}
		},
		MetricPointsDropped:  a.MetricPointsDropped,
		Docs:                 a.Flows.Docs,
		DocsConfigured:       cfg.Docs.Configured,
		Commands:             a.Flows.Commands,
		AllowRemoteEndpoints: cfg.Doctor.AllowRemoteEndpoints,
	}
	if cfg.File != "" {
		deps.CheckConfig = func() error {
			if p := a.fileProblem(); p != nil {
				return p
			}
			return nil
		}
	}
	if cfg.Telemetry.Source.Kind == config.SourceClickHouse {
		deps.SourceChecks = a.clickhouseChecks
	}
	if cfg.Telemetry.Source.Kind == config.SourceSQLite || cfg.Telemetry.Source.Kind == "" {
		deps.Store = func(ctx context.Context) (*store.Store, error) { return a.Store(ctx) }
		deps.SourceProblem = a.checkStoreExists
	}
	return deps
}

// endpoint is how the configured source is shown: a remote endpoint, or the receiver address
// that feeds the embedded store (the file path stays private).
func (d appDoctor) endpoint() string {
	src := d.a.Config.Telemetry.Source
	if src.Endpoint != "" {
		return src.Endpoint
	}
	return "http://" + d.a.Config.Receiver.Address
}

// maxEndpointRunes is the doctor output schema's bound of endpoint; a configured source may be
// longer (its own bound is 2,048 characters).
const maxEndpointRunes = 512

// Report runs the doctor and returns its report.
func (d appDoctor) Report(ctx context.Context, probe, family string) doctor.Report {
	return doctor.Run(ctx, doctor.Families(d.deps(), probe), family)
}

// Run implements flows.Doctor.
func (d appDoctor) Run(ctx context.Context, in gen.DoctorInput) (gen.DoctorOutput, error) {
	probe, family := "", ""
	if in.Endpoint != nil {
		probe = *in.Endpoint
	}
	if in.Family != nil {
		family = string(*in.Family)
	}
	rep := d.Report(ctx, probe, family)
	endpoint := d.endpoint()
	if probe != "" {
		endpoint = probe
	}
	out := gen.DoctorOutput{
		Status:   gen.Status(rep.Status),
		Endpoint: doctor.Shorten(endpoint, maxEndpointRunes),
		Counts:   tally(rep.Counts),
		Checks:   []gen.Check{},
	}
	for _, fr := range rep.Families {
		out.Checks = append(out.Checks, genCheck(doctor.Summary(fr)))
		if in.Detail == gen.DetailSummary {
			continue
		}
		f := gen.DoctorOutputFamily{Name: gen.DoctorFamily(fr.Name), Status: gen.Status(fr.Status), Counts: tally(fr.Counts), Checks: []gen.Check{}}
		for _, c := range fr.Checks {
			f.Checks = append(f.Checks, genCheck(c))
		}
		out.Families = append(out.Families, f)
	}
	return out, nil
}

// DoctorReport runs the doctor for people (`runlens doctor`).
func (a *App) DoctorReport(ctx context.Context) doctor.Report {
	return appDoctor{a: a}.Report(ctx, "", "")
}

func tally(c doctor.Counts) gen.Tally {
	return gen.Tally{Pass: int64(c.Pass), Warn: int64(c.Warn), Fail: int64(c.Fail)}
}

func genCheck(c doctor.Check) gen.Check {
	out := gen.Check{Name: c.Name, Status: gen.Status(c.Status), Summary: c.Summary}
	if c.Fix != "" {
		fix := c.Fix
		out.Fix = &fix
	}
	return out
}
