package app

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/otlp"
)

// ReceiverState says who receives OTLP on the address a project's app exports to.
type ReceiverState string

// The receiver states, as get_app_status.source.receiver.state reports them.
const (
	// ReceiverHosted: this process listens there, into this project's store.
	ReceiverHosted ReceiverState = "hosted"
	// ReceiverShared: another runlens process listens there, into this project's store.
	ReceiverShared ReceiverState = "shared"
	// ReceiverForeign: the address is held by the receiver of another store, or by a program
	// that is not runlens: the app's telemetry does not reach this project's store.
	ReceiverForeign ReceiverState = "foreign"
	// ReceiverOff: nothing receives there (turned off, or not running).
	ReceiverOff ReceiverState = "off"
	// ReceiverUnknown: not determined yet, or the holder did not answer.
	ReceiverUnknown ReceiverState = "unknown"
)

// ReceiverStatus is what runlens knows about the project's receiver address.
type ReceiverStatus struct {
	Address string
	State   ReceiverState
	// Note says, in one sentence, what the state means for the project.
	Note string
	// Fix says what to do; empty when nothing needs doing.
	Fix string
	// MetricPointsDropped is what the holder (shared) said it dropped, when it said so.
	MetricPointsDropped int64
}

// receiverProtocol is what differs between the project's two receiver addresses.
type receiverProtocol struct {
	// name is how messages name the receiver: "receiver" or "gRPC receiver".
	name string
	// address and enabled read the configuration.
	address func(*config.Config) string
	enabled func(*config.Config) bool
	// probe asks the holder of an address whose receiver it is.
	probe func(ctx context.Context, addr string) (otlp.Identity, error)
	// offFix is what turns the receiver back on.
	offFix string
	// fixPort says how to give the project a port of its own.
	fixPort func(a *App) string
}

var (
	httpProtocol = &receiverProtocol{
		name:    "receiver",
		address: func(c *config.Config) string { return c.Receiver.Address },
		enabled: func(c *config.Config) bool { return c.Receiver.Enabled },
		probe:   otlp.Probe,
		offFix:  "Remove --receiver off, RUNLENS_RECEIVER=off or receiver.enabled false, or run `runlens collect`.",
		fixPort: (*App).portFix,
	}
	grpcProtocol = &receiverProtocol{
		name:    "gRPC receiver",
		address: func(c *config.Config) string { return c.Receiver.GRPCAddress },
		enabled: func(c *config.Config) bool { return c.Receiver.GRPCEnabled },
		probe:   otlp.ProbeGRPC,
		offFix:  "Remove --receiver-grpc off, RUNLENS_RECEIVER_GRPC=off or receiver.grpcAddress off (and --receiver off, RUNLENS_RECEIVER=off or receiver.enabled false), or run `runlens collect`.",
		fixPort: (*App).grpcPortFix,
	}
)

// recheckAfter is how long a probe result about another process stays current: the holder of
// a port can go away or change, and a probe costs one loopback request.
const recheckAfter = 5 * time.Second

// hostWait bounds how long a status request waits for serve's own hosting attempt, which
// normally takes milliseconds (listen, open the store, and at most one probe).
const hostWait = 5 * time.Second

// receiverState is the App's record of its receiver address, shared by the hosting goroutine
// and the tools.
type receiverState struct {
	proto   *receiverProtocol
	mu      sync.Mutex
	status  ReceiverStatus
	checked time.Time
	// hosting is closed when this process's attempt to host the receiver has finished; nil
	// when the process does not host one (doctor, init, collect).
	hosting chan struct{}
}

// ReceiverStatus reports who receives OTLP/HTTP on the configured address. In a serve process
// it waits (briefly) for the hosting attempt; otherwise, and when another process holds the
// address, it asks the holder, at most every few seconds.
func (a *App) ReceiverStatus(ctx context.Context) ReceiverStatus { return a.recv.current(ctx, a) }

// GRPCReceiverStatus is ReceiverStatus for the OTLP/gRPC address.
func (a *App) GRPCReceiverStatus(ctx context.Context) ReceiverStatus {
	return a.grpcRecv.current(ctx, a)
}

func (r *receiverState) current(ctx context.Context, a *App) ReceiverStatus {
	addr := r.proto.address(a.Config)
	r.mu.Lock()
	hosting := r.hosting
	r.mu.Unlock()
	if hosting != nil {
		wait, cancel := context.WithTimeout(ctx, hostWait)
		select {
		case <-hosting:
		case <-wait.Done():
		}
		cancel()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if hosting != nil && r.status.State == "" {
		return ReceiverStatus{Address: addr, State: ReceiverUnknown,
			Note: "runlens is still starting its " + r.proto.name + " on " + addr + "."}
	}
	if r.status.State == ReceiverHosted || (!r.checked.IsZero() && time.Since(r.checked) < recheckAfter) {
		return r.status
	}
	r.status, r.checked = a.checkHolder(ctx, r.proto), time.Now()
	return r.status
}

// set records the outcome of this process's hosting attempt.
func (r *receiverState) set(s ReceiverStatus) {
	r.mu.Lock()
	r.status, r.checked = s, time.Now()
	r.mu.Unlock()
}

// startHosting marks the receiver as being hosted by this process; the returned channel is to
// be closed once the attempt has a status.
func (r *receiverState) startHosting() chan struct{} {
	done := make(chan struct{})
	r.mu.Lock()
	r.hosting = done
	r.mu.Unlock()
	return done
}

// checkHolder asks whoever listens on the configured address of p whose receiver it is.
func (a *App) checkHolder(ctx context.Context, p *receiverProtocol) ReceiverStatus {
	addr := p.address(a.Config)
	s := ReceiverStatus{Address: addr}
	id, err := p.probe(ctx, addr)
	switch {
	case errors.Is(err, otlp.ErrNoListener) && !p.enabled(a.Config):
		s.State, s.Note = ReceiverOff, "The "+p.name+" is turned off and nothing else listens on "+addr+"."
		s.Fix = p.offFix
	case errors.Is(err, otlp.ErrNoListener) && !bindable(addr):
		// Nothing listens, yet the port cannot be bound: a connection holds it as its local
		// end (a client socket of some program, which the kernel hands ports of its
		// ephemeral range), open or closed and lingering in TIME_WAIT. SO_REUSEADDR lets a
		// receiver bind over TIME_WAIT only of sockets that set it too (a previous
		// receiver's), not over a client's.
		s.State = ReceiverForeign
		s.Note = addr + " is taken by a connection of another program (open, or closed and lingering in TIME_WAIT for up to a minute), not by a listener: no " + p.name + " can listen there meanwhile."
		s.Fix = p.fixPort(a)
	case errors.Is(err, otlp.ErrNoListener):
		s.State, s.Note = ReceiverOff, "Nothing listens on the "+p.name+" address "+addr+"."
		s.Fix = "Start a session (`runlens serve` starts the project's detached receiver), or run `runlens collect`."
		if !a.Config.Receiver.Detached {
			s.Fix = "Run `runlens collect`, or keep `runlens serve` running (it hosts the " + p.name + " when the port is free)."
		}
	case errors.Is(err, otlp.ErrNotRunlens):
		s.State = ReceiverForeign
		s.Note = addr + " is held by a program that is not a runlens " + p.name + ": the app's telemetry sent there does not reach this project's store."
		s.Fix = p.fixPort(a)
	case err != nil:
		s.State = ReceiverUnknown
		s.Note = addr + " is held, but its holder did not say whose " + p.name + " it is."
		s.Fix = "Check what listens on " + addr + "; if it is not this project's runlens, " + lowerFirst(p.fixPort(a))
	case id.Store == a.ownStoreID(ctx):
		s.State = ReceiverShared
		s.Note = "Another runlens process receives on " + addr + " into this project's store."
		if p, ok := a.RunningReceiver(); ok && p.Detached {
			s.Note = "This project's detached receiver (runlens collect, pid " + strconv.Itoa(p.PID) + ") receives on " + addr + " into its store, between sessions too; `runlens status` shows it."
		}
		s.MetricPointsDropped = id.MetricPointsDropped
	default:
		s.State = ReceiverForeign
		s.Note = addr + " is held by the runlens " + p.name + " of another store (another project): the app's telemetry sent there lands in that store, not this project's."
		s.Fix = p.fixPort(a)
	}
	return s
}

// ownStoreID is the published id of the store this project's receiver writes, or "" when that
// store does not exist yet (so no receiver can be writing it).
func (a *App) ownStoreID(ctx context.Context) string {
	if !a.storeOpened.Load() {
		if _, err := os.Stat(a.Config.Store.Path); errors.Is(err, fs.ErrNotExist) {
			return ""
		}
	}
	st, err := a.Store(ctx)
	if err != nil {
		return ""
	}
	return otlp.StoreID(st.InstanceID())
}

// portFix is the fix for an address held by someone else: a port of the project's own.
func (a *App) portFix() string {
	free, _ := a.ProposePorts()
	return fmt.Sprintf("Give this project its own port: put \"receiver\": {\"address\": %q} in runlens.json (`runlens init` writes free ones) and export to it with OTEL_EXPORTER_OTLP_ENDPOINT=http://%s.", free, free)
}

// grpcPortFix is portFix for the gRPC receiver.
func (a *App) grpcPortFix() string {
	_, free := a.ProposePorts()
	return fmt.Sprintf("Give this project its own gRPC port: put \"receiver\": {\"grpcAddress\": %q} in runlens.json (`runlens init` writes free ones) and export to it with OTEL_EXPORTER_OTLP_PROTOCOL=grpc and OTEL_EXPORTER_OTLP_ENDPOINT=http://%s.", free, free)
}

// The ports runlens proposes: OTLP/HTTP in [ProposedHTTPBase, +1000), OTLP/gRPC the same
// offset in the thousand above, so a project's two ports read as a pair (14318 and 15318).
// Both ranges lie below every common ephemeral range (Linux 32768–60999, macOS and Windows
// 49152–65535): a port there is never taken at random by a client connection's local end.
const (
	ProposedHTTPBase = 14000
	ProposedGRPCBase = 15000
	proposedSpan     = 1000
)

// ProposePorts proposes free loopback addresses for this project's two receivers, other than
// the configured ones. The candidates come from a hash of the project root, so a project is
// offered the same ports each time while they stay free, and two projects are unlikely to be
// offered the same ones.
func (a *App) ProposePorts() (httpAddr, grpcAddr string) {
	cfg := a.Config.Receiver
	host := hostOf(cfg.Address)
	grpcHost := hostOf(cfg.GRPCAddress)
	sum := fnv.New32a()
	sum.Write([]byte(a.Config.ProjectRoot))
	start := int(sum.Sum32() % proposedSpan)
	for i := range 100 {
		off := (start + i) % proposedSpan
		h := net.JoinHostPort(host, strconv.Itoa(ProposedHTTPBase+off))
		g := net.JoinHostPort(grpcHost, strconv.Itoa(ProposedGRPCBase+off))
		if h != cfg.Address && g != cfg.GRPCAddress && bindable(h) && bindable(g) {
			return h, g
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(ProposedHTTPBase+start)), net.JoinHostPort(grpcHost, strconv.Itoa(ProposedGRPCBase+start))
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		return h
	}
	return "127.0.0.1"
}

// bindable reports whether a receiver could listen on addr now. Like the receivers, it binds
// with SO_REUSEADDR (Go's default on Unix), so a port whose previous receiver's connections
// linger in TIME_WAIT counts as free, as it is for them.
func bindable(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// maxNote is the schema's bound on get_app_status.source.receiver.note.
const maxNote = 512

// receiversAnswer is ReceiverStatus of each receiver in the contract's shape: the note carries
// the fix too, since the agent reading it is the one who can apply it. A receiver turned off is
// left out, and so are both when the tools read another source (Jaeger, ClickHouse, Aspire):
// whoever holds the default ports then is none of runlens's business, and advice to move the
// app's exporter would be wrong.
func (a *App) receiversAnswer(ctx context.Context) []gen.GetAppStatusOutputSourceReceiver {
	if k := a.Config.Telemetry.Source.Kind; k != config.SourceSQLite && k != "" {
		return nil
	}
	var out []gen.GetAppStatusOutputSourceReceiver
	if a.Config.Receiver.Enabled {
		out = append(out, receiverAnswer(gen.GetAppStatusOutputSourceReceiverProtocolHTTP, a.ReceiverStatus(ctx)))
	}
	if a.Config.Receiver.GRPCEnabled {
		out = append(out, receiverAnswer(gen.GetAppStatusOutputSourceReceiverProtocolGrpc, a.GRPCReceiverStatus(ctx)))
	}
	return out
}

func receiverAnswer(p gen.GetAppStatusOutputSourceReceiverProtocol, s ReceiverStatus) gen.GetAppStatusOutputSourceReceiver {
	out := gen.GetAppStatusOutputSourceReceiver{Protocol: p, Address: s.Address, State: gen.GetAppStatusOutputSourceReceiverState(s.State)}
	note := s.Note
	if s.Fix != "" {
		note += " " + s.Fix
	}
	if r := []rune(note); len(r) > maxNote {
		note = string(r[:maxNote-1]) + "…"
	}
	if note != "" {
		out.Note = &note
	}
	return out
}
