package dbservers

import (
	"bufio"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Redis is a running throwaway Redis server on a free loopback port, without persistence.
type Redis struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
}

// redisReadyWithin bounds the wait for a starting server.
const redisReadyWithin = 15 * time.Second

// StartRedis starts redis-server on a free loopback port with no RDB snapshots and no append
// only file, its working folder in t.TempDir, and waits until it answers PING. The server is
// stopped when the test ends.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	server, err := findProgram("redis-server")
	if err != nil {
		unavailable(t, "Redis server missing: %v", err)
	}
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
		cmd := execRedis(server, dir, port)
		p, err := startProc(cmd)
		if err != nil {
			t.Fatalf("run redis-server: %v", err)
		}
		deadline := time.Now().Add(redisReadyWithin)
		for !pong(r.Addr) {
			if p.hasExited() {
				break
			}
			if time.Now().After(deadline) {
				_ = p.cmd.Process.Kill()
				<-p.exited
				t.Fatalf("redis-server did not answer PING within %s: %s", redisReadyWithin, tail(p.log.String(), 2000))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if p.hasExited() {
			if attempt < 3 && strings.Contains(p.log.String(), "Address already in use") {
				continue
			}
			t.Fatalf("redis-server exited while starting (%v): %s", p.waitErr, tail(p.log.String(), 2000))
		}
		t.Cleanup(func() {
			if p.hasExited() {
				return
			}
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		})
		return r
	}
}

// pong sends PING and reports whether +PONG came back.
func pong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.TrimSpace(line) == "+PONG"
}

// execRedis is the redis-server command line: loopback only, no snapshots, no append-only
// file, no unix socket, logging to stdout.
func execRedis(server, dir string, port int) *exec.Cmd {
	cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--protected-mode", "yes", "--logfile", "", "--loglevel", "warning")
	cmd.SysProcAttr = sysProcAttr(nil, syscall.SIGKILL)
	cmd.Env = serverEnv()
	cmd.Dir = dir
	return cmd
}
