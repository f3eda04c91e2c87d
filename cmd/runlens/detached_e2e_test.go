package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
)

// TestTelemetrySentBetweenSessionsIsReceived is the user's scenario: a session starts the
// project's detached receiver and ends; the app's spans sent afterwards are acknowledged;
// the next session reads them; status shows the receiver and stop ends it.
func TestTelemetrySentBetweenSessionsIsReceived(t *testing.T) {
	p := newDetachedProject(t)
	p.session()
	pid := p.pid()
	if pid == 0 || len(p.receivers()) != 1 || p.receivers()[0] != pid {
		t.Fatalf("after the session: pid file %d, receivers %v; want one detached receiver\nthe session's stderr:\n%s", pid, p.receivers(), p.lastStderr())
	}

	sendSpans(t, p.http, "shop")

	answers := p.session(
		toolCall{"get_recent_errors", map[string]any{}},
		toolCall{"list_runs", map[string]any{}},
		toolCall{"get_app_status", map[string]any{}},
	)
	var errs struct {
		Count  int64 `json:"count"`
		Groups []struct {
			SampleMessage string `json:"sampleMessage"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(answers[0], &errs); err != nil || errs.Count != 1 || len(errs.Groups) != 1 || !strings.Contains(errs.Groups[0].SampleMessage, "payment declined") {
		t.Errorf("get_recent_errors after the sessions = %s, want the declined payment", answers[0])
	}
	var runs struct {
		Count int64 `json:"count"`
	}
	if err := json.Unmarshal(answers[1], &runs); err != nil || runs.Count != 2 {
		t.Errorf("list_runs = %s, want the 2 requests sent between sessions", answers[1])
	}
	var status struct {
		Source struct {
			Receivers []struct {
				Protocol, Address, State, Note string
			} `json:"receivers"`
		} `json:"source"`
	}
	if err := json.Unmarshal(answers[2], &status); err != nil {
		t.Fatal(err)
	}
	if r := status.Source.Receivers; len(r) != 2 || r[0].Protocol != "http" || r[0].Address != p.http || r[1].Protocol != "grpc" || r[1].Address != p.grpc ||
		r[0].State != "shared" || r[1].State != "shared" || !strings.Contains(r[0].Note, "detached receiver") {
		t.Errorf("get_app_status source.receivers = %+v; want both receivers, shared with the detached one", r)
	}
	if p.pid() != pid {
		t.Errorf("the second session replaced the receiver: pid %d, was %d", p.pid(), pid)
	}

	// The receiver rewrites its state file every second.
	var code int
	var out string
	eventually(t, 10*time.Second, "runlens status counts the spans", func() bool {
		code, out = p.run("status")
		return strings.Contains(out, "2 spans")
	})
	for _, want := range []string{"pid " + strconv.Itoa(pid), "detached", "http://" + p.http, p.grpc, ".runlens/telemetry.db", "2 spans"} {
		if code != 0 || !strings.Contains(out, want) {
			raw, _ := os.ReadFile(filepath.Join(app.ReceiverDir(filepath.Join(p.root, config.DefaultStorePath)), "receiver.log"))
			t.Errorf("runlens status: exit %d, lacks %q:\n%s\nlog:\n%s", code, want, out, raw)
		}
	}
	code, out = p.run("stop")
	if code != 0 || !strings.Contains(out, "stopped the receiver (pid "+strconv.Itoa(pid)+")") {
		t.Errorf("runlens stop: exit %d:\n%s", code, out)
	}
	if len(p.receivers()) != 0 || p.pid() != 0 {
		t.Errorf("after stop: receivers %v, pid file %d", p.receivers(), p.pid())
	}
	if code, out := p.run("status"); code != 1 || !strings.Contains(out, "no receiver is running") {
		t.Errorf("runlens status after stop: exit %d:\n%s", code, out)
	}
}

func TestSessionsStartingAtOnceLeaveOneReceiver(t *testing.T) {
	p := newDetachedProject(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { p.session() })
	}
	wg.Wait()
	if got := p.receivers(); len(got) != 1 || got[0] != p.pid() {
		t.Fatalf("after 4 sessions started at once: receivers %v, pid file %d; want exactly one", got, p.pid())
	}
}

func TestAnIdleDetachedReceiverExits(t *testing.T) {
	p := newDetachedProject(t, app.EnvIdleExit+"=300ms")
	p.session()
	if p.pid() == 0 {
		t.Fatal("the session started no receiver")
	}
	eventually(t, 20*time.Second, "the idle receiver exits", func() bool { return len(p.receivers()) == 0 })
	if p.pid() != 0 {
		t.Errorf("the idle receiver left its pid file behind (pid %d)", p.pid())
	}
}

func TestAKilledReceiverIsRestartedByTheNextSession(t *testing.T) {
	p := newDetachedProject(t)
	p.session()
	first := p.pid()
	if first == 0 {
		t.Fatal("the session started no receiver")
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the killed receiver is gone", func() bool { return len(p.receivers()) == 0 })
	if p.pid() != first {
		t.Fatalf("the pid file should still name the killed receiver %d: %d", first, p.pid())
	}
	p.session()
	second := p.pid()
	if second == 0 || second == first || len(p.receivers()) != 1 {
		t.Fatalf("after the next session: pid file %d (killed %d), receivers %v\nthe session's stderr:\n%s", second, first, p.receivers(), p.lastStderr())
	}
	sendSpans(t, p.http, "shop")
}

func TestADeletedStoreIsRecreatedNotWrittenBlind(t *testing.T) {
	p := newDetachedProject(t)
	p.session()
	sendSpans(t, p.http, "before")
	store := filepath.Join(p.root, config.DefaultStorePath)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(store + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "the receiver recreates the store", func() bool {
		_, err := os.Stat(store)
		return err == nil
	})
	sendSpans(t, p.http, "after")
	answers := p.session(toolCall{"get_app_status", map[string]any{}})
	var status struct {
		Services []struct {
			Service string `json:"service"`
		} `json:"services"`
	}
	if err := json.Unmarshal(answers[0], &status); err != nil || len(status.Services) != 1 || status.Services[0].Service != "after" {
		t.Errorf("get_app_status after the store was deleted = %s, want only the service sent after", answers[0])
	}
	if code, out := p.run("status"); code != 0 || !strings.Contains(out, "was deleted") {
		t.Errorf("runlens status does not tell the store was deleted: exit %d:\n%s", code, out)
	}
}

func TestTheDetachedReceiverExitsWhenItsProjectGoes(t *testing.T) {
	p := newDetachedProject(t)
	p.session()
	if p.pid() == 0 {
		t.Fatal("the session started no receiver")
	}
	if err := os.Remove(filepath.Join(p.root, "runlens.json")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the receiver exits once runlens.json is deleted", func() bool { return len(p.receivers()) == 0 })
}

func TestASecondCollectOfTheStoreSaysOneRuns(t *testing.T) {
	p := newDetachedProject(t)
	p.session()
	pid := p.pid()
	code, out := p.run("collect", "--listen", freeAddr(t), "--listen-grpc", "off")
	if code != 1 || !strings.Contains(out, "already running (pid "+strconv.Itoa(pid)+")") || !strings.Contains(out, "runlens stop") {
		t.Errorf("a second collect: exit %d, want 1 naming the running receiver %d:\n%s", code, pid, out)
	}
	if p.pid() != pid || len(p.receivers()) != 1 {
		t.Errorf("the second collect disturbed the receiver: pid file %d, receivers %v", p.pid(), p.receivers())
	}
}
