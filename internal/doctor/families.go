package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/hostcfg"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// Deps are what the doctor examines. Nil parts are reported as not configured, not crashed on.
type Deps struct {
	// ProjectRoot is the absolute project folder.
	ProjectRoot string
	// ConfigFile is the configuration file that was read ("" when there is none), and
	// CheckConfig validates it again against its schema.
	ConfigFile  string
	CheckConfig func() error
	// Telemetry is the configured source; SourceEndpoint is how it is shown.
	Telemetry      telemetry.Source
	SourceEndpoint string
	// Store opens the embedded store; nil when the source is not embedded.
	Store func(ctx context.Context) (*store.Store, error)
	// SourceProblem says why the configured source cannot answer before it is asked (a
	// sqlite source naming a file that does not exist); nil, or a nil error, when none is known.
	// An error that is a Fixer carries its own fix.
	SourceProblem func() error
	// SourceChecks are the configured source's own checks (a remote backend's tables and
	// rights); nil when it has none. They say which part fails when the source does not answer.
	SourceChecks func(ctx context.Context) []Check
	// ReceiverAddr is the OTLP receiver address; ReceiverEnabled is false when it is off.
	ReceiverAddr    string
	ReceiverEnabled bool
	// Receiver says who receives on ReceiverAddr; nil falls back to dialling the address.
	Receiver func(ctx context.Context) Receiver
	// GRPCReceiver says who receives OTLP/gRPC on the project's gRPC address; nil leaves the
	// gRPC receiver unchecked.
	GRPCReceiver func(ctx context.Context) Receiver
	// MetricPointsDropped is how many metric data points the project's receiver was sent and
	// dropped (runlens keeps traces and logs only); nil when unknown.
	MetricPointsDropped func(ctx context.Context) int64
	Docs                *docs.Corpus
	// DocsConfigured is true when the configuration names the docs folder; a missing or empty
	// default folder is then a problem, otherwise only a fact.
	DocsConfigured bool
	Commands       *commands.Runner
	// AllowRemoteEndpoints lets the endpoint probe reach addresses other than loopback.
	AllowRemoteEndpoints bool
	Now                  func() time.Time
	// Client probes endpoints; nil means a client with a 2 s timeout.
	Client *http.Client
}

// Family names, in the order the doctor runs them.
const (
	FamilySource          = "source"
	FamilyStore           = "store"
	FamilyWorkspace       = "workspace"
	FamilyInstrumentation = "instrumentation"
	FamilyClients         = "clients"
)

// Families returns the five check families over d. probe, when not empty, is an endpoint to
// probe instead of the configured source.
func Families(d Deps, probe string) []Family {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Client == nil {
		d.Client = &http.Client{Timeout: 2 * time.Second}
	}
	return []Family{
		{Name: FamilySource, Run: func(ctx context.Context) ([]Check, error) { return sourceChecks(ctx, d, probe) }},
		{Name: FamilyStore, Run: func(ctx context.Context) ([]Check, error) { return storeChecks(ctx, d) }},
		{Name: FamilyWorkspace, Run: func(ctx context.Context) ([]Check, error) { return workspaceChecks(ctx, d) }},
		{Name: FamilyInstrumentation, Run: func(ctx context.Context) ([]Check, error) { return instrumentationChecks(ctx, d) }},
		{Name: FamilyClients, Run: func(ctx context.Context) ([]Check, error) { return clientChecks(d) }},
	}
}

// sourceChecks: the telemetry source answers and has recent data; or the probed endpoint answers.
func sourceChecks(ctx context.Context, d Deps, probe string) ([]Check, error) {
	if probe != "" {
		return []Check{probeEndpoint(ctx, d, probe)}, nil
	}
	if d.SourceProblem != nil {
		if err := d.SourceProblem(); err != nil {
			return []Check{{Name: "source_exists", Status: Fail, Summary: sentence(err.Error()),
				Fix: fixOf(err, "Check telemetry.source in runlens.json, RUNLENS_TELEMETRY and --telemetry.")}}, nil
		}
	}
	if d.Telemetry == nil {
		return []Check{{Name: "source_configured", Status: Fail, Summary: "No telemetry source is configured.", Fix: "Set telemetry.source in runlens.json or RUNLENS_TELEMETRY."}}, nil
	}
	info := d.Telemetry.Describe(ctx)
	var own []Check
	if d.SourceChecks != nil {
		own = d.SourceChecks(ctx)
	}
	if !info.Reachable && len(own) > 0 {
		return own, nil
	}
	if !info.Reachable && info.Problem != nil {
		return []Check{{Name: "source_reachable", Status: Fail, Summary: sentence(info.Problem.Error()),
			Fix: fixOf(info.Problem, "Start the backend, or check telemetry.source in runlens.json.")}}, nil
	}
	if !info.Reachable {
		return []Check{{Name: "source_reachable", Status: Fail,
			Summary: fmt.Sprintf("The %s telemetry source does not answer.", info.Kind),
			Fix:     "Start the backend, or check telemetry.source in runlens.json (`runlens collect` hosts the embedded receiver)."}}, nil
	}
	checks := []Check{{Name: "source_reachable", Status: Pass, Summary: fmt.Sprintf("The %s telemetry source answers.", info.Kind)}}
	if info.Note != "" {
		checks = append(checks, Check{Name: "source_coverage", Status: Pass, Summary: info.Note})
	}
	switch {
	case info.NewestDataMs == 0 && info.Kind == "jaeger":
		checks = append(checks, Check{Name: "source_recent_data", Status: Warn, Summary: "Jaeger holds no traces yet.",
			Fix: "Point the app's exporter at Jaeger's OTLP receiver (port 4318 for OTLP/HTTP, 4317 for gRPC)."})
	case info.NewestDataMs == 0:
		checks = append(checks, Check{Name: "source_recent_data", Status: Warn, Summary: "The source holds no telemetry yet.",
			Fix: "Point the app's exporter at the receiver: OTEL_EXPORTER_OTLP_ENDPOINT=http://" + d.ReceiverAddr + " and OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf."})
	default:
		age := d.Now().Sub(time.UnixMilli(info.NewestDataMs))
		if age > time.Hour {
			checks = append(checks, Check{Name: "source_recent_data", Status: Warn,
				Summary: fmt.Sprintf("The newest telemetry is %s old.", roundAge(age)),
				Fix:     "Run the app with its OpenTelemetry exporter enabled, then ask again."})
		} else {
			checks = append(checks, Check{Name: "source_recent_data", Status: Pass, Summary: fmt.Sprintf("The newest telemetry is %s old.", roundAge(age))})
		}
	}
	return append(checks, own...), nil
}

// probeEndpoint checks that an endpoint answers HTTP. Only loopback hosts are probed unless
// configuration allows others, so the doctor cannot be turned into a way to reach the network.
func probeEndpoint(ctx context.Context, d Deps, raw string) Check {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Check{Name: "endpoint_valid", Status: Fail, Summary: "The endpoint is not an http(s) URL.", Fix: "Pass an endpoint such as http://127.0.0.1:4318."}
	}
	if !d.AllowRemoteEndpoints && !isLoopbackHost(ctx, u.Hostname()) {
		return Check{Name: "endpoint_allowed", Status: Fail, Summary: "Only loopback endpoints may be probed.",
			Fix: "Probe a loopback address, or set doctor.allowRemoteEndpoints in runlens.json."}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Check{Name: "endpoint_reachable", Status: Fail, Summary: "The endpoint could not be requested.", Fix: "Check the URL."}
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return Check{Name: "endpoint_reachable", Status: Fail, Summary: "The endpoint does not answer.", Fix: "Start the service listening there, or check host and port."}
	}
	resp.Body.Close()
	return Check{Name: "endpoint_reachable", Status: Pass, Summary: fmt.Sprintf("The endpoint answers (HTTP %d).", resp.StatusCode)}
}

// isLoopbackHost reports whether every address host resolves to is a loopback address.
func isLoopbackHost(ctx context.Context, host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// storeChecks: the embedded store is intact and within its limits, and the receiver listens.
func storeChecks(ctx context.Context, d Deps) ([]Check, error) {
	if d.Store == nil {
		return []Check{{Name: "store_embedded", Status: Pass, Summary: "The configured source is not the embedded store; nothing to check."}}, nil
	}
	st, err := d.Store(ctx)
	if err != nil {
		summary := "The embedded store cannot be opened."
		var f Fixer
		if errors.As(err, &f) {
			summary = sentence(err.Error())
		}
		return []Check{{Name: "store_open", Status: Fail, Summary: summary,
			Fix: fixOf(err, "Check that the store folder (.runlens/ by default) is writable, or remove a corrupt telemetry.db.")},
			receiverCheck(ctx, d)}, nil
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("read store stats: %w", err)
	}
	var checks []Check
	if stats.Integrity == "ok" {
		checks = append(checks, Check{Name: "store_integrity", Status: Pass, Summary: "The store passes SQLite's quick check."})
	} else {
		checks = append(checks, Check{Name: "store_integrity", Status: Fail, Summary: "The store fails SQLite's quick check.", Fix: "Stop runlens, move the telemetry.db aside, and let the receiver create a new one."})
	}
	size := Check{Name: "store_size", Status: Pass, Summary: fmt.Sprintf("%d spans and %d logs in %s, limit %s, retention %s.", stats.Spans, stats.Logs, bytesText(stats.UsedBytes), bytesText(stats.MaxBytes), stats.Retention)}
	if stats.MaxBytes > 0 && stats.UsedBytes > stats.MaxBytes*9/10 {
		size.Status = Warn
		size.Fix = "Raise store.maxBytes or shorten store.retention in runlens.json."
	}
	checks = append(checks, size)
	checks = append(checks, receiverCheck(ctx, d))
	if d.GRPCReceiver != nil {
		checks = append(checks, grpcReceiverCheck(d.GRPCReceiver(ctx)))
	}
	return checks, nil
}

// Receiver is who receives on the project's receiver address, as the app found out.
type Receiver struct {
	// State is hosted, shared, foreign, off or unknown (get_app_status.source.receiver.state).
	State string
	// Note says what the state means; Fix what to do about it.
	Note, Fix string
	// Disabled is true when the configuration turned this receiver off.
	Disabled bool
}

// receiverCheck reports whose receiver listens on the configured address: this project's
// passes; another store's, or a program that is not runlens, fails (the app's telemetry lands
// elsewhere); none warns.
func receiverCheck(ctx context.Context, d Deps) Check {
	if d.Receiver == nil {
		return dialReceiver(ctx, d)
	}
	r := d.Receiver(ctx)
	c := Check{Name: "receiver_listening", Summary: r.Note, Fix: r.Fix}
	switch r.State {
	case "hosted", "shared":
		c.Status = Pass
	case "foreign":
		c.Status = Fail
	default:
		c.Status = Warn
	}
	return c
}

// grpcReceiverCheck is receiverCheck for the OTLP/gRPC address; a gRPC receiver turned off in
// the configuration is a choice, not a problem.
func grpcReceiverCheck(r Receiver) Check {
	c := Check{Name: "receiver_grpc_listening", Summary: r.Note, Fix: r.Fix}
	switch {
	case r.State == "hosted" || r.State == "shared":
		c.Status = Pass
	case r.State == "foreign":
		c.Status = Fail
	case r.State == "off" && r.Disabled:
		c.Status, c.Fix = Pass, ""
		c.Summary = "The OTLP/gRPC receiver is turned off; apps export OTLP/HTTP."
	default:
		c.Status = Warn
	}
	return c
}

// dialReceiver checks only that something listens on the receiver address.
func dialReceiver(ctx context.Context, d Deps) Check {
	if !d.ReceiverEnabled {
		return Check{Name: "receiver_listening", Status: Warn, Summary: "The OTLP receiver is turned off.", Fix: "Remove --receiver off / RUNLENS_RECEIVER=off, or run `runlens collect`."}
	}
	var dialer net.Dialer
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := dialer.DialContext(dctx, "tcp", d.ReceiverAddr)
	if err != nil {
		return Check{Name: "receiver_listening", Status: Warn, Summary: "Nothing listens on the receiver address " + d.ReceiverAddr + ".", Fix: "Run `runlens collect`, or keep `runlens serve` running (it hosts the receiver when the port is free)."}
	}
	conn.Close()
	return Check{Name: "receiver_listening", Status: Pass, Summary: "The OTLP receiver listens on " + d.ReceiverAddr + "."}
}

// workspaceChecks: configuration valid, docs present, every allow rule matches a command.
func workspaceChecks(ctx context.Context, d Deps) ([]Check, error) {
	var checks []Check
	switch {
	case d.ConfigFile == "":
		checks = append(checks, Check{Name: "config_valid", Status: Pass, Summary: "No runlens.json; the documented defaults apply."})
	case d.CheckConfig != nil:
		if err := d.CheckConfig(); err != nil {
			summary := "runlens.json is invalid: " + firstLine(err.Error())
			var f Fixer
			if errors.As(err, &f) {
				summary = firstLine(err.Error()) // it names the file and position itself
			}
			checks = append(checks, Check{Name: "config_valid", Status: Fail, Summary: summary,
				Fix: fixOf(err, "Fix the key named above; the published config.schema.json lists every key.")})
		} else {
			checks = append(checks, Check{Name: "config_valid", Status: Pass, Summary: "runlens.json is valid."})
		}
	}
	if d.Docs != nil {
		info, err := d.Docs.Info(ctx)
		switch {
		case errors.Is(err, docs.ErrRootOutside):
			checks = append(checks, Check{Name: "docs_present", Status: Fail, Summary: "The docs folder " + info.Root + " resolves outside the project root, so it is not served.",
				Fix: "Set docs.root in runlens.json to a folder inside the project; a symbolic link must point inside the project too."})
		case errors.Is(err, docs.ErrCorpusNotFound) && !d.DocsConfigured:
			checks = append(checks, Check{Name: "docs_present", Status: Pass, Summary: "The project has no docs folder (" + info.Root + "); the docs tools have nothing to serve. Set docs.root in runlens.json to serve one."})
		case errors.Is(err, docs.ErrCorpusNotFound):
			checks = append(checks, Check{Name: "docs_present", Status: Warn, Summary: "The docs folder " + info.Root + " does not exist.", Fix: "Create it, or set docs.root in runlens.json."})
		case err != nil:
			return nil, fmt.Errorf("read docs: %w", err)
		case info.DocumentCount == 0 && !d.DocsConfigured:
			checks = append(checks, Check{Name: "docs_present", Status: Pass, Summary: "The docs folder " + info.Root + " holds no Markdown documents; the docs tools have nothing to serve."})
		case info.DocumentCount == 0:
			checks = append(checks, Check{Name: "docs_present", Status: Warn, Summary: "The docs folder " + info.Root + " holds no Markdown documents.", Fix: "Add .md files, or set docs.root in runlens.json."})
		default:
			checks = append(checks, Check{Name: "docs_present", Status: Pass, Summary: fmt.Sprintf("%d documents under %s.", info.DocumentCount, info.Root)})
		}
		if sk := info.Skipped; err == nil && sk.Total() > 0 {
			checks = append(checks, Check{Name: "docs_skipped", Status: Warn,
				Summary: fmt.Sprintf("%d file(s) under %s are not served: %d too large, %d symlinks, %d over the limits, %d unreadable, %d with a clashing slug, %d with a name no slug can carry.",
					sk.Total(), info.Root, sk.Oversize, sk.Symlinks, sk.OverLimit, sk.Unreadable, sk.Conflicts, sk.BadNames),
				Fix: "Symlinks are never followed: copy the file into the docs folder; split files over 2 MiB; rename files whose slugs clash, and files or folders whose names hold control characters, a backslash or a %-escape."})
		}
	}
	if d.Commands != nil {
		cat := d.Commands.Catalog()
		unused := d.Commands.Policy().UnusedAllowRules(cat)
		if len(unused) > 0 {
			checks = append(checks, Check{Name: "policy_rules_match", Status: Warn,
				Summary: fmt.Sprintf("%d allow rule(s) match no command: %s.", len(unused), strings.Join(capList(unused, 5), ", ")),
				Fix:     "Fix the rule's prefix or add the command to commands.catalog in runlens.json."})
		} else {
			checks = append(checks, Check{Name: "policy_rules_match", Status: Pass, Summary: fmt.Sprintf("%d command(s) in the catalog; every allow rule matches one.", cat.Len())})
		}
		for i, p := range d.Commands.Problems() {
			if i == 3 {
				break
			}
			checks = append(checks, Check{Name: "commands_discovery", Status: Warn, Summary: firstLine(p.Error()), Fix: "Fix the file named above, or turn its discovery off in runlens.json."})
		}
	}
	return checks, nil
}

// clientChecks: which MCP host configuration files of the project register runlens, and
// whether the command each registers can be started (a registration of a program that is not
// on PATH looks fine in the file and fails only when the host starts it).
func clientChecks(d Deps) ([]Check, error) {
	regs := hostcfg.Registered(d.ProjectRoot, "runlens")
	if len(regs) == 0 {
		return []Check{{Name: "clients_registered", Status: Warn, Summary: "No project-scoped MCP host configuration registers runlens.",
			Fix: "Run `runlens init` to register it for Claude Code, Codex, VS Code and Cursor."}}, nil
	}
	var found, broken []string
	for _, r := range regs {
		found = append(found, r.File)
		if r.Command == "" {
			continue // a URL registration: nothing to start
		}
		if _, err := hostcfg.Resolve(r.Command); err != nil {
			broken = append(broken, fmt.Sprintf("%s (%v)", r.File, err))
		}
	}
	if len(broken) > 0 {
		return []Check{{Name: "clients_registered", Status: Fail,
			Summary: "Registered, but the host cannot start the command in " + strings.Join(broken, ", ") + ".",
			Fix:     "Put runlens on PATH (`go install ./cmd/runlens` or `make install` in its source folder), or register its absolute path: `runlens init --command /absolute/path/to/runlens` after removing the old entry."}}, nil
	}
	return []Check{{Name: "clients_registered", Status: Pass, Summary: "Registered in " + strings.Join(found, ", ") + "; the command resolves."}}, nil
}

// Fixer is an error that knows what a person should do about it; the doctor shows its fix
// rather than a generic one.
type Fixer interface {
	error
	Fix() string
}

// fixOf returns err's own fix when it has one, else fallback.
func fixOf(err error, fallback string) string {
	var f Fixer
	if errors.As(err, &f) && f.Fix() != "" {
		return f.Fix()
	}
	return fallback
}

// sentence capitalises s and ends it with a full stop, for a summary built from an error.
func sentence(s string) string {
	s = firstLine(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func roundAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Hour).String()
}

func bytesText(n int64) string {
	const mib = 1 << 20
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func capList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("%d more", len(s)-n))
}
