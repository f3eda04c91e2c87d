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
}

// recheckAfter is how long a probe result about another process stays current: the holder of
// a port can go away or change, and a probe costs one loopback request.
const recheckAfter = 5 * time.Second

// hostWait bounds how long a status request waits for serve's own hosting attempt, which
// normally takes milliseconds (listen, open the store, and at most one probe).
const hostWait = 5 * time.Second

// receiverState is the App's record of its receiver address, shared by the hosting goroutine
// and the tools.
type receiverState struct {
	mu      sync.Mutex
	status  ReceiverStatus
	checked time.Time
	// hosting is closed when this process's attempt to host the receiver has finished; nil
	// when the process does not host one (doctor, init, collect).
	hosting chan struct{}
}

// ReceiverStatus reports who receives on the configured address. In a serve process it waits
// (briefly) for the hosting attempt; otherwise, and when another process holds the address, it
// asks the holder, at most every few seconds.
func (a *App) ReceiverStatus(ctx context.Context) ReceiverStatus {
	r := &a.recv
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
		return ReceiverStatus{Address: a.Config.Receiver.Address, State: ReceiverUnknown,
			Note: "runlens is still starting its receiver on " + a.Config.Receiver.Address + "."}
	}
	if r.status.State == ReceiverHosted || (!r.checked.IsZero() && time.Since(r.checked) < recheckAfter) {
		return r.status
	}
	r.status, r.checked = a.checkHolder(ctx), time.Now()
	return r.status
}

// setReceiver records the outcome of this process's hosting attempt.
func (a *App) setReceiver(s ReceiverStatus) {
	a.recv.mu.Lock()
	a.recv.status, a.recv.checked = s, time.Now()
	a.recv.mu.Unlock()
}

// checkHolder asks whoever listens on the configured address whose receiver it is.
func (a *App) checkHolder(ctx context.Context) ReceiverStatus {
	cfg := a.Config.Receiver
	addr := cfg.Address
	s := ReceiverStatus{Address: addr}
	id, err := otlp.Probe(ctx, addr)
	switch {
	case errors.Is(err, otlp.ErrNoListener) && !cfg.Enabled:
		s.State, s.Note = ReceiverOff, "The receiver is turned off and nothing else listens on "+addr+"."
		s.Fix = "Remove --receiver off, RUNLENS_RECEIVER=off or receiver.enabled false, or run `runlens collect`."
	case errors.Is(err, otlp.ErrNoListener):
		s.State, s.Note = ReceiverOff, "Nothing listens on the receiver address "+addr+"."
		s.Fix = "Run `runlens collect`, or keep `runlens serve` running (it hosts the receiver when the port is free)."
	case errors.Is(err, otlp.ErrNotRunlens):
		s.State = ReceiverForeign
		s.Note = addr + " is held by a program that is not a runlens receiver: the app's telemetry sent there does not reach this project's store."
		s.Fix = a.portFix()
	case err != nil:
		s.State = ReceiverUnknown
		s.Note = addr + " is held, but its holder did not say whose receiver it is."
		s.Fix = "Check what listens on " + addr + "; if it is not this project's runlens, " + lowerFirst(a.portFix())
	case id.Store == a.ownStoreID(ctx):
		s.State = ReceiverShared
		s.Note = "Another runlens process receives on " + addr + " into this project's store."
	default:
		s.State = ReceiverForeign
		s.Note = addr + " is held by the runlens receiver of another store (another project): the app's telemetry sent there lands in that store, not this project's."
		s.Fix = a.portFix()
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
	free := a.ProposeAddress()
	return fmt.Sprintf("Give this project its own port: put \"receiver\": {\"address\": %q} in runlens.json (`runlens init` proposes one) and export to it with OTEL_EXPORTER_OTLP_ENDPOINT=http://%s.", free, free)
}

// ProposeAddress proposes a free loopback address for this project's receiver. The candidates
// come from a hash of the project root, so a project is offered the same port each time while
// it stays free, and two projects are unlikely to be offered the same one.
func (a *App) ProposeAddress() string {
	host := "127.0.0.1"
	if h, _, err := net.SplitHostPort(a.Config.Receiver.Address); err == nil && h != "" {
		host = h
	}
	sum := fnv.New32a()
	sum.Write([]byte(a.Config.ProjectRoot))
	const base, span = 43180, 1000
	start := int(sum.Sum32() % span)
	for i := range 50 {
		addr := net.JoinHostPort(host, strconv.Itoa(base+(start+i)%span))
		if addr == a.Config.Receiver.Address {
			continue
		}
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	if ln, err := net.Listen("tcp", net.JoinHostPort(host, "0")); err == nil {
		defer ln.Close()
		return ln.Addr().String()
	}
	return net.JoinHostPort(host, strconv.Itoa(base+start))
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// maxNote is the schema's bound on get_app_status.source.receiver.note.
const maxNote = 512

// receiverAnswer is ReceiverStatus in the contract's shape: the note carries the fix too,
// since the agent reading it is the one who can apply it.
func (a *App) receiverAnswer(ctx context.Context) *gen.GetAppStatusOutputSourceReceiver {
	s := a.ReceiverStatus(ctx)
	out := &gen.GetAppStatusOutputSourceReceiver{Address: s.Address, State: gen.GetAppStatusOutputSourceReceiverState(s.State)}
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
