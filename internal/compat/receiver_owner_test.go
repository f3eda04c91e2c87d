package compat

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// projectOnPort is a fixture workspace whose runlens.json puts the receiver on addr.
func projectOnPort(t *testing.T, addr string) string {
	t.Helper()
	root := newWorkspace(t)
	writeFile(t, root, "runlens.json", fmt.Sprintf(`{"receiver": {"address": %q}}`, addr))
	return root
}

// receiverOf calls get_app_status and returns its OTLP/HTTP entry of source.receivers,
// failing when it is absent.
func receiverOf(t *testing.T, s *serveSession) (state, note string) {
	t.Helper()
	var st appStatus
	wantSuccess(t, "get_app_status", s.call(t, "get_app_status", map[string]any{}), &st)
	for _, r := range st.Source.Receivers {
		if r.Protocol == "http" {
			return r.State, r.Note
		}
	}
	t.Fatal("get_app_status has no OTLP/HTTP entry in source.receivers")
	return "", ""
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// TestTwoProjectsOnOnePortAreToldApart runs two projects side by side configured with the same
// receiver port. Project A's serve hosts the receiver; project B's serve, doctor, collect and
// init each find the port held by the receiver of another store and say so (stderr,
// get_app_status.source.receiver, a doctor failure with the per-project port fix, a proposed
// free port), while a second serve of project A recognises its own store and shares it.
func TestTwoProjectsOnOnePortAreToldApart(t *testing.T) {
	bin := runlensBinary(t)
	addr := freeAddr(t)
	projA, projB := projectOnPort(t, addr), projectOnPort(t, addr)

	a := startServe(t, projA, nil, "--project-root", projA)
	if state, note := receiverOf(t, a); state != "hosted" {
		t.Fatalf("project A's receiver: state %q (%s), want hosted\nstderr:\n%s", state, note, a.stderr.Bytes())
	}

	b := startServe(t, projB, nil, "--project-root", projB)
	state, note := receiverOf(t, b)
	if state != "foreign" || !strings.Contains(note, "another store") || !strings.Contains(note, `"receiver": {"address": "127.0.0.1:`) {
		t.Errorf("project B's receiver: state %q, note %q; want foreign, naming another store and the per-project port fix", state, note)
	}
	eventually(t, 10*time.Second, "project B's serve says on stderr that the port belongs to another store", func() bool {
		e := string(b.stderr.Bytes())
		return strings.Contains(e, addr) && strings.Contains(e, "another")
	})

	var doc doctorAnswer
	wantSuccess(t, "doctor", b.call(t, "doctor", map[string]any{}), &doc)
	c := doc.check(t, "store", "receiver_listening")
	if c.Status != "fail" || !strings.Contains(c.Summary, addr) || !strings.Contains(c.Fix, `"receiver": {"address": "127.0.0.1:`) || !strings.Contains(c.Fix, "runlens init") {
		t.Errorf("project B's doctor receiver check = %+v, want a fail with the per-project port fix", c)
	}

	p := run(t, runOpts{dir: projB}, bin, "doctor", "--project-root", projB)
	if p.exitCode != 1 || !regexp.MustCompile(`receiver_listening\s+fail`).Match(p.stdout) {
		t.Errorf("runlens doctor in project B: exit %d, want 1 with receiver_listening failing:\n%s", p.exitCode, p.stdout)
	}

	p = run(t, runOpts{dir: projB, timeout: 20 * time.Second}, bin, "collect", "--project-root", projB)
	if p.exitCode == 0 || !strings.Contains(string(p.stderr), addr) || !strings.Contains(string(p.stderr), "another") {
		t.Errorf("runlens collect in project B: exit %d, want a failure naming the other store's receiver:\n%s", p.exitCode, p.stderr)
	}

	p = run(t, runOpts{dir: projB}, bin, "init", "--project-root", projB, "--host", "claude")
	proposal := regexp.MustCompile(`"receiver": \{"address": "(127\.0\.0\.1:\d+)"`).FindSubmatch(p.stdout)
	if p.exitCode != 0 || proposal == nil || string(proposal[1]) == addr {
		t.Fatalf("runlens init in project B: exit %d, want a proposed address other than %s:\n%s%s", p.exitCode, addr, p.stdout, p.stderr)
	}
	if ln, err := net.Listen("tcp", string(proposal[1])); err != nil {
		t.Errorf("the proposed address %s is not free: %v", proposal[1], err)
	} else {
		ln.Close()
	}

	a2 := startServe(t, projA, nil, "--project-root", projA)
	if state, note := receiverOf(t, a2); state != "shared" {
		t.Errorf("a second serve of project A: state %q (%s), want shared", state, note)
	}
	eventually(t, 10*time.Second, "the second serve of project A says on stderr that it only reads", func() bool {
		e := string(a2.stderr.Bytes())
		return strings.Contains(e, addr) && strings.Contains(e, "reading")
	})
}

// TestAPortHeldByAnotherProgramIsReported holds the configured port with an HTTP server that
// is not runlens: serve says so on stderr and in get_app_status, and the doctor fails.
func TestAPortHeldByAnotherProgramIsReported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})}
	go other.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() { other.Close() })
	addr := ln.Addr().String()
	root := projectOnPort(t, addr)

	s := startServe(t, root, nil, "--project-root", root)
	state, note := receiverOf(t, s)
	if state != "foreign" || !strings.Contains(note, "not a runlens receiver") {
		t.Errorf("receiver: state %q, note %q; want foreign, saying the holder is not runlens", state, note)
	}
	eventually(t, 10*time.Second, "serve says on stderr that something else holds the port", func() bool {
		e := string(s.stderr.Bytes())
		return strings.Contains(e, addr) && strings.Contains(e, "not a runlens receiver")
	})
	var doc doctorAnswer
	wantSuccess(t, "doctor", s.call(t, "doctor", map[string]any{}), &doc)
	if c := doc.check(t, "store", "receiver_listening"); c.Status != "fail" || !strings.Contains(c.Fix, "runlens.json") {
		t.Errorf("doctor receiver check = %+v, want a fail with the fix", c)
	}
}

// TestTheIdentityEndpointAnswersOnlyLoopbackPages asks a hosted receiver who it is: a plain
// loopback request gets an opaque store id (no path), while a request naming a foreign Host
// or carrying a foreign Origin is refused like an export would be.
func TestTheIdentityEndpointAnswersOnlyLoopbackPages(t *testing.T) {
	addr := freeAddr(t)
	root := projectOnPort(t, addr)
	s := startServe(t, root, nil, "--project-root", root)
	if state, note := receiverOf(t, s); state != "hosted" {
		t.Fatalf("receiver state %q (%s), want hosted", state, note)
	}
	get := func(host, origin string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/runlens/identity", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for name := range resp.Header {
			if strings.HasPrefix(strings.ToLower(name), "access-control-") {
				t.Errorf("identity answer grants %s", name)
			}
		}
		return resp.StatusCode, string(b)
	}
	status, body := get("", "")
	var id struct {
		Service string `json:"service"`
		Store   string `json:"store"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &id) != nil || id.Service != "runlens" || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id.Store) {
		t.Errorf("identity: %d %s, want runlens with a 32-hex store id", status, body)
	}
	if strings.Contains(body, root) || strings.Contains(body, "telemetry.db") {
		t.Errorf("identity discloses the store path: %s", body)
	}
	if status, body := get("attacker.example", ""); status != http.StatusForbidden {
		t.Errorf("identity with Host attacker.example: %d %s, want 403", status, body)
	}
	if status, body := get("", "http://attacker.example"); status != http.StatusForbidden {
		t.Errorf("identity with a foreign Origin: %d %s, want 403", status, body)
	}
}
