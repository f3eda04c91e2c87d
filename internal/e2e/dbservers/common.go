package dbservers

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// installHint says how to get the server programs.
const installHint = "install them with .ci/install-deps (or apt-get install mariadb-server redis-server)"

// unavailable fails under CI=true, where .ci/install-deps installed the servers and their
// absence is a broken build; elsewhere it skips the test with the reason.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required under CI=true; %s)", msg, installHint)
	}
	t.Skipf("%s; %s", msg, installHint)
}

// findProgram looks a server program up on PATH and then in the sbin folders, which Debian
// keeps off an unprivileged user's PATH.
func findProgram(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH or in /usr/sbin, /usr/local/sbin", name)
}

// runAs is the account a server runs as; nil runs it as the current user.
type runAs struct {
	name     string
	uid, gid uint32
}

// serverUser picks the account for a server that refuses to run as root: the current one
// unless it is root, then the first of accounts that exists and is not root.
func serverUser(accounts ...string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range accounts {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &runAs{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and none of the accounts %v exists to run the server as", accounts)
}

// handOver gives path to cred's account (nothing when cred is nil).
func handOver(cred *runAs, path string) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.uid), int(cred.gid)); err != nil {
		return fmt.Errorf("hand %s to %s: %w", filepath.Base(path), cred.name, err)
	}
	return nil
}

// reachable lets cred's account traverse (not list) the folders above dir up to the first one
// it could already traverse: t.TempDir's folders are private to the test's user.
func reachable(cred *runAs, dir string) error {
	if cred == nil {
		return nil
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 != 0 {
			return nil
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o111); err != nil {
			return fmt.Errorf("let %s reach %s: %w", cred.name, dir, err)
		}
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// serverEnv is a minimal environment: the servers need nothing of the test's, and PostgreSQL
// must not pick up a PGDATA or PGPORT from it.
func serverEnv() []string {
	return []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "TZ=UTC"}
}

// proc is a started server process.
type proc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	log     *lockedBuffer
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, exited: make(chan struct{}), log: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// hasExited reports whether the process is gone.
func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// errBindFailed marks a start that lost its port to another process.
var errBindFailed = errors.New("the port was taken")

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
