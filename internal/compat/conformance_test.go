package compat

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// conformanceScenarios are the server scenarios of @modelcontextprotocol/conformance that
// runlens must pass. All but server-stateless record every message the server sends and
// validate it against the MCP schema of the negotiated revision (the wire-schema-valid
// check); server-stateless probes with raw HTTP requests and records none.
var conformanceScenarios = []struct {
	name     string
	wireTest bool // the scenario reports wire-schema-valid
}{
	{"server-initialize", true},
	{"ping", true},
	{"tools-list", true},
	{"tools-call-error", true},
	{"server-stateless", false},
}

// envInNetns marks the test process re-executed inside a private network namespace.
const envInNetns = "RUNLENS_COMPAT_IN_NETNS"

// TestConformanceSuite runs the conformance suite's server scenarios against the built binary.
// The suite speaks HTTP only, so supergateway (4.0.0) serves `runlens serve --test-fixtures`
// as Streamable HTTP on 127.0.0.1. Where the kernel allows unprivileged user namespaces, the
// whole test re-runs itself under `unshare -rn`, in a private network namespace with only
// loopback, so nothing it listens on is reachable from anywhere else; otherwise it uses the
// machine's loopback.
func TestConformanceSuite(t *testing.T) {
	bin := runlensBinary(t)
	tools := nodeTools(t)
	if os.Getenv(envInNetns) == "" && privateNetworkAvailable() {
		runInPrivateNetwork(t, bin, tools)
		return
	}
	if os.Getenv(envInNetns) != "" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("bring loopback up in the private network namespace: %v", err)
		}
		t.Log("running in a private network namespace (unshare -rn)")
	} else {
		t.Log("unshare -rn is not available here: running on the machine's loopback")
	}

	nodeBin := node(t)
	gateway := toolPath(t, "supergateway/dist/index.js")
	suite := toolPath(t, "@modelcontextprotocol/conformance/dist/index.js")
	ws := newWorkspace(t)

	port := freePort(t)
	server := shellQuote(append([]string{bin}, serveArgs(ws, "--test-fixtures")...))
	_, gwErr := startBackground(t, runOpts{env: nodeEnv(t)}, nodeBin, gateway,
		"--stdio", server, "--outputTransport", "streamableHttp",
		"--port", fmt.Sprint(port), "--logLevel", "none")
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	waitListening(t, port, 30*time.Second, gwErr)

	for _, sc := range conformanceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			p := run(t, runOpts{env: nodeEnv(t), timeout: 120 * time.Second}, nodeBin, suite,
				"server", "--url", url, "--scenario", sc.name, "--output-dir", out)
			checks := readChecks(t, out)
			if len(checks) == 0 {
				t.Fatalf("scenario %s reported no checks (exit %d); output:\n%s\n%s", sc.name, p.exitCode, tail(p.stdout), tail(p.stderr))
			}
			sawWire := false
			for _, c := range checks {
				t.Logf("%-8s %s %s", c.Status, c.ID, c.ErrorMessage)
				switch c.Status {
				case "SUCCESS", "INFO", "SKIPPED":
				default:
					t.Errorf("check %s: %s: %s\ndetails: %.800s", c.ID, c.Status, c.ErrorMessage, c.Details)
				}
				if c.ID == "wire-schema-valid" {
					sawWire = true
				}
			}
			if sc.wireTest && !sawWire {
				t.Errorf("scenario %s reported no wire-schema-valid check", sc.name)
			}
		})
	}
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// readChecks reads the checks.json the suite wrote below dir (one folder per scenario run).
func readChecks(t *testing.T, dir string) []check {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one checks.json below the output folder, found %v (%v)", files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	if err := json.Unmarshal(raw, &checks); err != nil {
		t.Fatalf("decode %s: %v", files[0], err)
	}
	return checks
}

// privateNetworkAvailable reports whether `unshare -rn` works here (unprivileged user and
// network namespaces; some kernels and containers forbid them).
func privateNetworkAvailable() bool {
	path, err := exec.LookPath("unshare")
	if err != nil {
		return false
	}
	return exec.Command(path, "-rn", "true").Run() == nil
}

// runInPrivateNetwork re-runs this test inside `unshare -rn` and reports its output; the built
// binary and the tooling are handed down so the child neither rebuilds nor reinstalls.
func runInPrivateNetwork(t *testing.T, bin, tools string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("find the test binary: %v", err)
	}
	p := run(t, runOpts{
		env:     []string{envInNetns + "=1", envBinary + "=" + bin, envTools + "=" + tools},
		timeout: 5 * time.Minute,
	}, "unshare", "-rn", self, "-test.run=^TestConformanceSuite$", "-test.v", "-test.count=1")
	for _, line := range strings.Split(strings.TrimRight(string(p.stdout), "\n"), "\n") {
		if !strings.HasPrefix(line, "=== ") {
			t.Log(line)
		}
	}
	if p.exitCode != 0 {
		t.Fatalf("conformance suite in the private network namespace failed (exit %d); stderr:\n%s", p.exitCode, tail(p.stderr))
	}
}

// freePort picks a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// pickPort asks the kernel for a free loopback port.
func pickPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("listen on loopback: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening polls until something answers HTTP on port, or fails after timeout with the
// gateway's stderr.
func waitListening(t *testing.T, port int, timeout time.Duration, stderr *syncBuffer) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("supergateway did not listen on port %d within %s: %v\nstderr:\n%s", port, timeout, err, tail(stderr.Bytes()))
		}
		time.Sleep(50 * time.Millisecond) // polling a port with a deadline, not synchronising goroutines
	}
}

// shellQuote renders argv as one POSIX shell command line (supergateway runs --stdio through
// a shell).
func shellQuote(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}
