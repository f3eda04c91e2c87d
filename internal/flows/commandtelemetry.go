package flows

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/telemetry"
)

// The flush grace: after a command ends, how long its telemetry may take to arrive (SDKs
// flush on exit, and a batch may still be in flight), and how often to look.
const (
	telemetryGrace = 3 * time.Second
	telemetryPoll  = 250 * time.Millisecond
	// telemetryQuiet is how long no new data must arrive before the grace ends early.
	telemetryQuiet = 600 * time.Millisecond
)

// The OpenTelemetry SDK variables execute_command sets (OpenTelemetry's environment variable
// specification), and those that mean the user already points the exporters elsewhere.
var userEndpointVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
}

// commandTel is the telemetry plan of one execute_command call.
type commandTel struct {
	// id is the invocation id the command's processes carry; empty when telemetry is not
	// pointed at runlens, and note says why.
	id   string
	note string
	env  func(cmd commands.Command) []string
}

// commandTelemetry plans the call's telemetry: when a receiver of this project's store is up
// (hosted by this server or by `runlens collect`), the command's exporters are pointed at it
// and its processes get a resource attribute naming the invocation — unless the catalog entry
// opted out, or the environment already points the exporters elsewhere (never overridden).
func (f *Flows) commandTelemetry(ctx context.Context) *commandTel {
	t := &commandTel{}
	if f.Receiver == nil || f.Telemetry == nil {
		t.note = "no receiver is configured for this project"
		return t
	}
	rec := f.Receiver(ctx)
	if rec == nil || (rec.State != "hosted" && rec.State != "shared") {
		t.note = "no receiver of this project's store is listening, so the command's telemetry is not collected"
		if rec != nil && rec.Note != nil {
			t.note += ": " + *rec.Note
		}
		return t
	}
	for _, v := range userEndpointVars {
		if os.Getenv(v) != "" {
			t.note = "the environment sets " + v + ", so the command's telemetry goes there, not to runlens"
			return t
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	t.env = func(cmd commands.Command) []string {
		if cmd.NoTelemetry {
			t.note = `the catalog entry opts out of telemetry ("telemetry": false)`
			return nil
		}
		t.id = id
		attrs := telemetry.InvocationKey + "=" + id
		if have := os.Getenv("OTEL_RESOURCE_ATTRIBUTES"); have != "" {
			attrs = have + "," + attrs
		}
		env := []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + rec.Address,
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_RESOURCE_ATTRIBUTES=" + attrs,
		}
		// Export promptly: a short command should not end before its first batch is due.
		for _, kv := range []string{"OTEL_BSP_SCHEDULE_DELAY=200", "OTEL_BLRP_SCHEDULE_DELAY=200"} {
			if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
				env = append(env, kv)
			}
		}
		return env
	}
	return t
}

// report waits out the flush grace and summarizes what the invocation's processes sent.
func (t *commandTel) report(ctx context.Context, f *Flows, started time.Time, full bool) (*gen.ExecuteCommandOutputTelemetry, *string) {
	if t.id == "" {
		return nil, optStr(t.note)
	}
	src := f.Telemetry
	f.awaitQuiet(ctx, src)
	w := telemetry.Window{StartMs: started.Add(-time.Second).UnixMilli(), EndMs: f.Now().Add(time.Minute).UnixMilli()}
	rep, err := src.Invocation(ctx, telemetry.InvocationQuery{ID: t.id, Window: w})
	if err != nil {
		return nil, ptr("the command's telemetry could not be read: the telemetry source did not answer")
	}
	out := &gen.ExecuteCommandOutputTelemetry{
		InvocationID: t.id, Spans: int(rep.Spans), ErrorLogs: ptr(int(rep.ErrorLogs)), WarnLogs: ptr(int(rep.WarnLogs)),
		OtherLogs: ptr(int(rep.OtherLogs)), Services: first(rep.Services, 10), RunIDs: rep.RunIDs,
	}
	if rep.Limited {
		out.Limited = ptr(true)
	}
	locs, _ := f.locateGroups(ctx, src, rep.Errors.Groups, full)
	for i, g := range rep.Errors.Groups {
		e := gen.ExecuteCommandOutputTelemetryError{Service: g.Service, Count: int(g.Count), Message: g.SampleMessage,
			ExceptionType: optStr(g.ExceptionType), Location: optStr(locs[i])}
		if len(g.RunIDs) > 0 {
			e.RunID = &g.RunIDs[0]
		}
		out.Errors = append(out.Errors, e)
	}
	for _, s := range rep.Slowest {
		out.Slowest = append(out.Slowest, gen.ExecuteCommandOutputTelemetrySlowestItem{Name: s.Name, Service: s.Service, DurationMs: telemetry.Ms(s.DurationNs)})
	}
	if rep.Spans == 0 && rep.ErrorLogs+rep.WarnLogs+rep.OtherLogs == 0 {
		return out, ptr("nothing arrived from the command's processes: it may not be instrumented, or not export OTLP over HTTP")
	}
	return out, nil
}

// awaitQuiet waits, at most the flush grace, until the source's data stops changing.
func (f *Flows) awaitQuiet(ctx context.Context, src telemetry.Source) {
	deadline := time.Now().Add(telemetryGrace)
	last, _ := src.Fingerprint(ctx)
	quietSince := time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(telemetryPoll):
		}
		snap, err := src.Fingerprint(ctx)
		if err != nil {
			return
		}
		if snap.ID != last.ID {
			last, quietSince = snap, time.Now()
			continue
		}
		if time.Since(quietSince) >= telemetryQuiet {
			return
		}
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
