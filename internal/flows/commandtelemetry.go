package flows

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/telemetry"
)

// How often the flush grace looks for new data, and how long no new data must arrive before
// it ends early (SDKs flush on exit, so most commands' telemetry is in when they end).
const (
	telemetryPoll  = 250 * time.Millisecond
	telemetryQuiet = 600 * time.Millisecond
)

// The OpenTelemetry SDK variables execute_command sets (OpenTelemetry's environment variable
// specification), and those that mean the user already points the exporters elsewhere.
var userEndpointVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
}

// protocolVars choose the exporters' protocol; the receiver runlens points them at speaks
// OTLP/HTTP, so a user's gRPC choice is not overridden either.
var protocolVars = []string{
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
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
// (hosted by this server, the detached receiver, or `runlens collect`), the command's exporters are pointed at it
// and its processes get a resource attribute naming the invocation — unless the catalog entry
// opted out, or the environment already points the exporters elsewhere (never overridden).
func (f *Flows) commandTelemetry(ctx context.Context) *commandTel {
	t := &commandTel{}
	if f.Receivers == nil || f.Telemetry == nil {
		t.note = "no receiver is configured for this project"
		return t
	}
	var rec *gen.GetAppStatusOutputSourceReceiver
	for _, r := range f.Receivers(ctx) {
		if r.Protocol == gen.GetAppStatusOutputSourceReceiverProtocolHTTP {
			rec = &r
		}
	}
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
	setProtocol := true
	for _, v := range protocolVars {
		switch p := strings.TrimSpace(os.Getenv(v)); p {
		case "":
		case "http/protobuf", "http/json":
			setProtocol = false // the receiver speaks both: keep the user's choice
		default:
			t.note = "the environment sets " + v + " to a protocol other than OTLP/HTTP, so the command's telemetry is not pointed at runlens's OTLP/HTTP receiver"
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
		attrs, replaced := withInvocation(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), id)
		if replaced {
			t.note = "the environment already named a " + telemetry.InvocationKey + " in OTEL_RESOURCE_ATTRIBUTES; runlens replaced it with this invocation's"
		}
		env := []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + rec.Address,
			"OTEL_RESOURCE_ATTRIBUTES=" + attrs,
		}
		if setProtocol {
			env = append(env, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
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
	notes := []string{}
	if t.note != "" {
		notes = append(notes, t.note)
	}
	if f.awaitQuiet(ctx, src) {
		notes = append(notes, fmt.Sprintf("telemetry was still arriving when the flush grace (%d ms) ended; list_runs or get_recent_errors with this invocation shows whatever of it came later",
			f.TelemetryGrace.Milliseconds()))
	}
	w := telemetry.Window{StartMs: started.Add(-time.Second).UnixMilli(), EndMs: f.Now().Add(time.Minute).UnixMilli()}
	rep, err := src.Invocation(ctx, telemetry.InvocationQuery{ID: t.id, Window: w})
	if err != nil {
		return nil, ptr("the command's telemetry could not be read: the telemetry source did not answer")
	}
	out := &gen.ExecuteCommandOutputTelemetry{
		InvocationID: t.id, Spans: rep.Spans, ErrorLogs: ptr(rep.ErrorLogs), WarnLogs: ptr(rep.WarnLogs),
		OtherLogs: ptr(rep.OtherLogs), Services: first(rep.Services, 10), RunIDs: rep.RunIDs,
	}
	if rep.Limited {
		out.Limited = ptr(true)
	}
	locs, _ := f.locateGroups(ctx, src, rep.Errors.Groups, full)
	for i, g := range rep.Errors.Groups {
		e := gen.ExecuteCommandOutputTelemetryError{Service: g.Service, Count: g.Count, Message: g.SampleMessage,
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
		notes = append(notes, "nothing arrived from the command's processes: it may not be instrumented, or not export OTLP over HTTP")
	}
	if len(notes) == 0 {
		return out, nil
	}
	note := strings.Join(notes, "; ")
	if len(note) > maxTelemetryNote {
		note = note[:maxTelemetryNote]
	}
	return out, &note
}

// maxTelemetryNote is the schema's bound of telemetryNote; the notes are ASCII.
const maxTelemetryNote = 512

// withInvocation is the OTEL_RESOURCE_ATTRIBUTES of a command: the inherited list (key=value
// pairs, comma-separated) without any runlens.invocation.id it held, then this invocation's.
// The id is runlens's to set: a command started from inside another invocation (a nested
// runlens, an inherited environment) would otherwise carry two, and SDKs disagree on which
// wins. replaced reports whether one was dropped.
func withInvocation(inherited, id string) (attrs string, replaced bool) {
	var keep []string
	for _, kv := range strings.Split(inherited, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == telemetry.InvocationKey {
			replaced = true
			continue
		}
		keep = append(keep, kv)
	}
	return strings.Join(append(keep, telemetry.InvocationKey+"="+id), ","), replaced
}

// awaitQuiet waits, at most the flush grace, until the source's data stops changing. It
// reports whether data was still arriving when the grace ended (a process the command left
// running keeps sending): the answer then says so rather than waiting for it.
func (f *Flows) awaitQuiet(ctx context.Context, src telemetry.Source) (stillArriving bool) {
	grace := f.TelemetryGrace
	if grace <= 0 {
		return false
	}
	poll, quiet := min(telemetryPoll, max(grace/8, 10*time.Millisecond)), min(telemetryQuiet, grace)
	deadline := time.Now().Add(grace)
	last, _ := src.Fingerprint(ctx)
	quietSince := time.Now()
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
		snap, err := src.Fingerprint(ctx)
		if err != nil {
			return false
		}
		now := time.Now()
		if snap.ID != last.ID {
			last, quietSince = snap, now
		} else if now.Sub(quietSince) >= quiet {
			return false
		}
		if !now.Before(deadline) {
			return now.Sub(quietSince) < quiet
		}
		timer.Reset(min(poll, deadline.Sub(now)+time.Millisecond))
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
