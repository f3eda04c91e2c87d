package commands

import (
	"sync"
	"unicode/utf8"
)

// tail keeps the newest bytes written to it in a fixed ring, so a command printing gigabytes
// costs the server a constant amount of memory and the agent sees how it ended.
type tail struct {
	mu    sync.Mutex
	buf   []byte
	pos   int   // next write position
	total int64 // every byte ever written
}

func newTail(size int) *tail {
	return &tail{buf: make([]byte, size)}
}

// Write keeps the newest len(buf) bytes; it never fails, so the child is never blocked or
// killed by a slow reader.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	size := len(t.buf)
	if n >= size {
		copy(t.buf, p[n-size:])
		t.pos = 0
		return n, nil
	}
	k := copy(t.buf[t.pos:], p)
	copy(t.buf, p[k:])
	t.pos = (t.pos + n) % size
	return n, nil
}

// Total is how many bytes were written in all.
func (t *tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Bytes returns the kept bytes, oldest first, and whether older bytes were dropped. When bytes
// were dropped, the tail starts at a UTF-8 boundary: a character cut in half is left out.
func (t *tail) Bytes() (out []byte, truncated bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.total <= int64(len(t.buf)) {
		return append([]byte(nil), t.buf[:t.total]...), false
	}
	out = make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.pos:]...)
	out = append(out, t.buf[:t.pos]...)
	for i := 0; i < utf8.UTFMax-1 && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
		out = out[1:]
	}
	return out, true
}
