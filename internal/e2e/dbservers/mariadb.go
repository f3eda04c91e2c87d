package dbservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MariaDB is a running throwaway MariaDB server: loopback only, on a free port, with one
// database and one password user that owns it.
type MariaDB struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
	// User and Password log in over TCP; the user has every privilege on Database.
	User, Password string
	Database       string
}

// DSN is the go-sql-driver/mysql data source name of the database:
// user:pass@tcp(addr)/db?parseTime=true.
func (m *MariaDB) DSN() string {
	return fmt.Sprintf("%s:%s@tcp(%s)/%s?parseTime=true", m.User, m.Password, m.Addr, m.Database)
}

// mariadbReadyWithin bounds the wait for a starting server.
const mariadbReadyWithin = 30 * time.Second

// StartMariaDB initializes a data directory in t.TempDir (mariadb-install-db), starts mariadbd
// on a free loopback port — as the mysql account (else nobody) when the test runs as root,
// since the server refuses root — waits until it greets a client, and has it create the
// database "app" and a user with a random password. The server is stopped, and its files
// removed, when the test ends.
func StartMariaDB(t testing.TB) *MariaDB {
	t.Helper()
	server, err := findProgram("mariadbd")
	if err != nil {
		unavailable(t, "MariaDB server missing: %v", err)
	}
	installDB, err := findProgram("mariadb-install-db")
	if err != nil {
		unavailable(t, "MariaDB server missing: %v", err)
	}
	cred, err := serverUser("mysql", "nobody")
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	dir := t.TempDir()
	if err := reachable(cred, dir); err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	if err := handOver(cred, dir); err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	data := filepath.Join(dir, "data")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, installDB, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	var out bytes.Buffer
	install.Stdout, install.Stderr = &out, &out
	install.SysProcAttr = sysProcAttr(cred, 0)
	install.Env = serverEnv()
	install.Dir = dir
	if err := install.Run(); err != nil {
		t.Fatalf("mariadb-install-db: %v: %s", err, tail(out.String(), 2000))
	}

	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	m := &MariaDB{User: "app", Password: hex.EncodeToString(secret), Database: "app"}
	// The server runs this file before it accepts a connection, so a client that got the
	// greeting finds the database and the user in place.
	initFile := filepath.Join(dir, "init.sql")
	initSQL := fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s`;\nCREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'%%';\n",
		m.Database, m.User, m.Password, m.Database, m.User)
	if err := os.WriteFile(initFile, []byte(initSQL), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := handOver(cred, initFile); err != nil {
		t.Fatal(err)
	}
	// A unix socket path is limited to about 100 bytes; a long test name makes a long
	// TempDir, so the socket then goes to a short folder of its own.
	socket := filepath.Join(dir, "mysqld.sock")
	if len(socket) > 100 {
		sdir, err := os.MkdirTemp("", "mdb")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(sdir) })
		if err := handOver(cred, sdir); err != nil {
			t.Fatal(err)
		}
		socket = filepath.Join(sdir, "s.sock")
	}

	var p *proc
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		m.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err = startMariaDB(server, cred, dir, data, socket, initFile, port)
		if err == nil {
			break
		}
		if err != errBindFailed || attempt == 3 {
			t.Fatalf("start MariaDB: %v", err)
		}
	}
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(15 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
	})
	return m
}

func startMariaDB(server string, cred *runAs, dir, data, socket, initFile string, port int) (*proc, error) {
	// Durability is not what a test measures: no binary log, no flush per commit, a small
	// buffer pool.
	cmd := exec.Command(server, "--no-defaults", "--datadir="+data,
		"--bind-address=127.0.0.1", "--port="+strconv.Itoa(port), "--socket="+socket,
		"--pid-file="+filepath.Join(dir, "mariadbd.pid"), "--init-file="+initFile,
		"--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--max-connections=100",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci")
	cmd.SysProcAttr = sysProcAttr(cred, syscall.SIGKILL)
	cmd.Env = serverEnv()
	cmd.Dir = dir
	p, err := startProc(cmd)
	if err != nil {
		return nil, fmt.Errorf("run mariadbd: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(mariadbReadyWithin)
	for {
		if greeted(addr) {
			return p, nil
		}
		if p.hasExited() {
			if strings.Contains(p.log.String(), "Address already in use") || strings.Contains(p.log.String(), "Do you already have another") {
				return nil, errBindFailed
			}
			return nil, fmt.Errorf("mariadbd exited while starting (%v): %s", p.waitErr, tail(p.log.String(), 2000))
		}
		if time.Now().After(deadline) {
			_ = p.cmd.Process.Kill()
			<-p.exited
			return nil, fmt.Errorf("mariadbd did not greet a client within %s: %s", mariadbReadyWithin, tail(p.log.String(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// greeted reports whether the server at addr sent its handshake packet: it accepts
// connections and has run its init file.
func greeted(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return false
	}
	// Payload length, sequence 0, then protocol version 10 (0xff would be an error packet).
	return hdr[3] == 0 && hdr[4] == 10
}
