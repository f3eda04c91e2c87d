package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Target is one server command as a host would spawn it.
type Target struct {
	// Name labels the target in results ("runlens", "go-sdk").
	Name string
	// Path is the executable; Args follow it.
	Path string
	Args []string
	// Dir is the working directory of the process.
	Dir string
}

// Proc is one running server driven over its stdio: lines in, lines out.
type Proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

// exitGrace bounds how long Close waits for a server to exit after its stdin closed.
const exitGrace = 10 * time.Second

// Start spawns t with piped stdin and stdout. The environment is the caller's, minus RUNLENS_*
// variables, so only t's flags configure it.
func Start(t Target) (*Proc, error) {
	cmd := exec.Command(t.Path, t.Args...)
	cmd.Dir = t.Dir
	cmd.Env = cleanEnv(os.Environ())
	p := &Proc{cmd: cmd, stderr: &tailBuffer{max: 4 << 10}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Name, err)
	}
	p.in, p.out = in, bufio.NewReaderSize(out, 64<<10)
	return p, nil
}

// Pid is the server's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Send writes one message line.
func (p *Proc) Send(line []byte) error {
	if _, err := p.in.Write(line); err != nil {
		return fmt.Errorf("write request: %w%s", err, p.stderrNote())
	}
	return nil
}

// Recv reads the next line the server wrote.
func (p *Proc) Recv() ([]byte, error) {
	line, err := p.out.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A long answer (tools/list): gather the rest of the line.
		buf := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = p.out.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return nil, fmt.Errorf("read response: %w%s", err, p.stderrNote())
	}
	return line, nil
}

// Close closes the server's stdin, as a host does to stop it, and waits for it to exit; a server
// that outlives the grace period is killed and reported.
func (p *Proc) Close() error {
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("server exit: %w%s", err, p.stderrNote())
		}
		return nil
	case <-time.After(exitGrace):
		p.cmd.Process.Kill()
		<-done
		return fmt.Errorf("server did not exit within %s of stdin closing", exitGrace)
	}
}

// stderrNote is the server's last stderr output, to explain a failure.
func (p *Proc) stderrNote() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	return "; server stderr: " + s
}

// cleanEnv drops RUNLENS_* variables so that the benchmark configures the server by flags only.
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "RUNLENS_") {
			out = append(out, kv)
		}
	}
	return out
}

// tailBuffer keeps the last max bytes written to it (a server's stderr, for error messages).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
