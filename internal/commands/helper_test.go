package commands

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child process: with helperEnv set it runs helperMain instead
// of the tests, so the executor is exercised against real processes without a shell.
const helperEnv = "COMMANDS_TEST_HELPER=1"

func TestMain(m *testing.M) {
	if os.Getenv("COMMANDS_TEST_HELPER") == "1" {
		os.Exit(helperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperArgv is the argv that runs one helper mode.
func helperArgv(t *testing.T, mode string, args ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{self, mode}, args...)
}

// helperEnvironment is a minimal environment that lets the child find itself as a helper.
// Under -race a child otherwise sleeps a second at exit (the detector's atexit_sleep_ms).
func helperEnvironment(extra ...string) []string {
	return append([]string{helperEnv, "PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}, extra...)
}

// floodByte is the deterministic content of the flood mode: byte i of the output.
func floodByte(i int) byte { return "0123456789abcdefghijklmnopqrstuvwxyz\n"[i%37] }

func helperMain(args []string) int {
	if len(args) == 0 {
		return 2
	}
	mode, rest := args[0], args[1:]
	switch mode {
	case "touch": // touch FILE ARGS...: record the arguments received, one per line
		return writeFile(rest[0], strings.Join(rest[1:], "\x00"))
	case "flood": // flood N: write N deterministic bytes, alternating stdout and stderr
		n, _ := strconv.Atoi(rest[0])
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = floodByte(i)
		}
		for off := 0; off < n; off += 4096 {
			w := os.Stdout
			if (off/4096)%2 == 1 {
				w = os.Stderr
			}
			_, _ = w.Write(buf[off:min(off+4096, n)])
		}
		return 0
	case "repeat": // repeat TEXT N: write TEXT N times
		n, _ := strconv.Atoi(rest[1])
		fmt.Print(strings.Repeat(rest[0], n))
		return 0
	case "exit": // exit CODE
		code, _ := strconv.Atoi(rest[0])
		fmt.Println("exiting with", code)
		return code
	case "stdin": // stdin: report what standard input holds
		data, err := io.ReadAll(os.Stdin)
		fmt.Printf("stdin: %d bytes, err=%v, content=%q\n", len(data), err, data)
		return 0
	case "env": // env NAME...: print each variable or <unset>
		for _, name := range rest {
			if v, ok := os.LookupEnv(name); ok {
				fmt.Printf("%s=%s\n", name, v)
			} else {
				fmt.Printf("%s=<unset>\n", name)
			}
		}
		return 0
	case "pwd":
		wd, _ := os.Getwd()
		fmt.Print(wd)
		return 0
	case "sleep": // sleep: block until killed
		time.Sleep(time.Hour)
		return 0
	case "ignore-term": // ignore-term READYFILE: ignore SIGTERM, then say so and block
		signal.Ignore(syscall.SIGTERM)
		if code := writeFile(rest[0], "ready"); code != 0 {
			return code
		}
		time.Sleep(time.Hour)
		return 0
	case "grandchild": // grandchild PIDFILE: start a sleeping child in our group, record its pid, block
		self, _ := os.Executable()
		c := exec.Command(self, "sleep")
		if err := c.Start(); err != nil {
			return 3
		}
		if code := writeFile(rest[0], strconv.Itoa(c.Process.Pid)); code != 0 {
			return code
		}
		time.Sleep(time.Hour)
		return 0
	case "background": // background PIDFILE: start a sleeping child in our group, record it, exit
		self, _ := os.Executable()
		c := exec.Command(self, "sleep")
		if err := c.Start(); err != nil {
			return 3
		}
		return writeFile(rest[0], strconv.Itoa(c.Process.Pid))
	case "escape": // escape PIDFILE: start a sleeping child in a new session holding our stdout, exit
		self, _ := os.Executable()
		c := exec.Command(self, "sleep")
		c.Stdout = os.Stdout
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			return 3
		}
		return writeFile(rest[0], strconv.Itoa(c.Process.Pid))
	case "tick": // tick N MS: print a line every MS milliseconds, N times
		n, _ := strconv.Atoi(rest[0])
		ms, _ := strconv.Atoi(rest[1])
		for i := range n {
			fmt.Println("tick", i)
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		return 0
	}
	return 2
}

// writeFile writes atomically, so a poller never sees a half-written file.
func writeFile(path, content string) int {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return 4
	}
	if err := os.Rename(tmp, path); err != nil {
		return 4
	}
	return 0
}

// waitForFile polls until path exists, failing the test after a deadline.
func waitForFile(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 10s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGone polls until process pid no longer runs (absent or a zombie awaiting its reaper).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// The state follows the parenthesised command name: "pid (comm) S ...".
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs 5s after the call ended", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
