package dbservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvPGBin names the directory holding initdb, postgres and pg_ctl. `make test` sets it to
// wherever Debian installed the newest server; without it the usual places are searched.
const EnvPGBin = "RUNLENS_PG_BIN"

// pgBinaries are the server programs a throwaway cluster needs.
var pgBinaries = []string{"initdb", "postgres", "pg_ctl"}

// FindPGBin returns the directory holding the PostgreSQL server programs: $RUNLENS_PG_BIN, else
// the newest /usr/lib/postgresql/<major>/bin (Debian keeps the server off PATH), else the
// directory of an initdb on PATH. The error says where it looked.
func FindPGBin(getenv func(string) string) (string, error) {
	if dir := getenv(EnvPGBin); dir != "" {
		if err := hasPGBinaries(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvPGBin, dir, err)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, dir := range dirs {
		if hasPGBinaries(dir) == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if hasPGBinaries(dir) == nil {
			return dir, nil
		}
	}
	return "", errors.New("no PostgreSQL server found (looked in $" + EnvPGBin + ", /usr/lib/postgresql/*/bin and PATH); install it with .ci/install-deps or apt-get install postgresql")
}

// majorOf reads the major version out of /usr/lib/postgresql/<major>/bin; 0 when it is not a number.
func majorOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func hasPGBinaries(dir string) error {
	for _, name := range pgBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("missing %s", name)
		}
		if fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not executable", name)
		}
	}
	return nil
}

// Postgres is a throwaway PostgreSQL cluster: its own data directory in a temporary folder,
// listening on a free 127.0.0.1 port and on a unix socket inside that folder only, password
// authentication, run as an unprivileged user (the server refuses to run as root).
type Postgres struct {
	// URL connects to the cluster's postgres database as its superuser.
	URL string

	bin, dir, data string
	cred           *runAs
	cmd            *exec.Cmd
	exited         chan struct{}
	waitErr        error
	log            *lockedBuffer
	stopOnce       sync.Once
	stopErr        error
}

// startAttempts bounds the retries when another process takes the free port between choosing
// it and the server binding it.
const startAttempts = 3

// StartPostgres creates and starts a cluster with the programs in bin. The caller must Stop it,
// also when its test fails; a test binary that dies leaves no server behind (the server gets
// SIGQUIT, PostgreSQL's immediate shutdown, when its parent goes away).
func StartPostgres(ctx context.Context, bin string) (*Postgres, error) {
	cred, err := serverUser("postgres", "nobody")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "runlens-pg-")
	if err != nil {
		return nil, fmt.Errorf("create cluster folder: %w", err)
	}
	p := &Postgres{bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred, log: &lockedBuffer{}}
	if err := p.initdb(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		err = p.start(ctx)
		if err == nil {
			return p, nil
		}
		if attempt == startAttempts || !strings.Contains(p.log.String(), "could not bind") {
			_ = p.Stop()
			return nil, err
		}
		p.log.Reset()
	}
}

// initdb creates the cluster with a random superuser password, handed to initdb in a file that
// only the server's account can read and that is removed right after.
func (p *Postgres) initdb(ctx context.Context) error {
	if p.cred != nil {
		if err := os.Chown(p.dir, int(p.cred.uid), int(p.cred.gid)); err != nil {
			return fmt.Errorf("hand the cluster folder to %s: %w", p.cred.name, err)
		}
	}
	secret := make([]byte, 18)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	password := hex.EncodeToString(secret)
	pwfile := filepath.Join(p.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("write password file: %w", err)
	}
	defer os.Remove(pwfile)
	if p.cred != nil {
		if err := os.Chown(pwfile, int(p.cred.uid), int(p.cred.gid)); err != nil {
			return fmt.Errorf("hand the password file to %s: %w", p.cred.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, "initdb"), "-D", p.data, "-U", "runlens",
		"--pwfile="+pwfile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = sysProcAttr(p.cred, 0)
	cmd.Env = serverEnv()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, tail(out.String(), 2000))
	}
	p.URL = (&url.URL{Scheme: "postgres", User: url.UserPassword("runlens", password), Path: "/postgres",
		RawQuery: "sslmode=disable"}).String()
	return nil
}

// start runs the server on a free loopback port and waits, with a deadline, until it accepts
// a connection.
func (p *Postgres) start(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	u, _ := url.Parse(p.URL)
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p.URL = u.String()
	// Durability is not what the workload measures: fsync off keeps seeding fast on a busy disk.
	cmd := exec.Command(filepath.Join(p.bin, "postgres"), "-D", p.data,
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", p.dir,
		"-c", "unix_socket_permissions=0700", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=30", "-c", "shared_buffers=64MB",
		"-c", "log_min_messages=warning", "-c", "jit=off")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = sysProcAttr(p.cred, syscall.SIGQUIT)
	cmd.Env = serverEnv()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p.awaitReady(ctx)
}

// readyWithin bounds the wait for a starting server.
const readyWithin = 30 * time.Second

func (p *Postgres) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWithin)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, p.URL)
		ccancel()
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("postgres exited while starting (%v): %s", p.waitErr, tail(p.log.String(), 2000))
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections within %s: %v: %s", readyWithin, err, tail(p.log.String(), 2000))
		case <-tick.C:
		}
	}
}

// Stop shuts the server down at once (pg_ctl stop -m immediate: nothing of it is worth a
// checkpoint), reaps it, and removes the cluster folder. It is safe to call more than once.
func (p *Postgres) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *Postgres) stop() error {
	var errs []error
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cmd := exec.CommandContext(ctx, filepath.Join(p.bin, "pg_ctl"), "stop", "-D", p.data, "-m", "immediate", "-w", "-t", "10")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = sysProcAttr(p.cred, 0)
			cmd.Env = serverEnv()
			if err := cmd.Run(); err != nil {
				errs = append(errs, fmt.Errorf("pg_ctl stop: %w: %s", err, tail(out.String(), 500)))
			}
			cancel()
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
	}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove cluster folder: %w", err))
	}
	return errors.Join(errs...)
}

// ServerLog is the tail of what the server wrote, for failure messages.
func (p *Postgres) ServerLog() string { return tail(p.log.String(), 4000) }
