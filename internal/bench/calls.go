package bench

import (
	"bytes"
	"fmt"
	"time"
)

// Session is a server that has been through the host's start-up exchange and is ready for calls.
type Session struct {
	*Proc
	Discovery Discovery
	next      int
}

// Open spawns t and performs initialize, initialized and tools/list.
func Open(t Target) (*Session, error) {
	p, err := Start(t)
	if err != nil {
		return nil, err
	}
	d, err := discover(p)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return &Session{Proc: p, Discovery: d, next: firstID}, nil
}

// ids reserves n request ids.
func (s *Session) ids(n int) int {
	first := s.next
	s.next += n
	return first
}

// RoundTrips sends n requests one at a time, each after the previous answer arrived, after
// `warmup` unmeasured ones, and summarizes the latency from writing a request to reading its
// answer.
func (s *Session) RoundTrips(req Request, warmup, n int) (Summary, error) {
	lat := make([]time.Duration, 0, n)
	for i := range warmup + n {
		id := s.ids(1)
		line := req(id)
		start := time.Now()
		if err := s.Send(line); err != nil {
			return Summary{}, err
		}
		got, err := s.Recv()
		elapsed := time.Since(start)
		if err != nil {
			return Summary{}, err
		}
		if _, err := check(got, id); err != nil {
			return Summary{}, err
		}
		if i >= warmup {
			lat = append(lat, elapsed)
		}
	}
	return Summarize(lat), nil
}

// Pipelined sends n requests keeping `depth` in flight — the writer runs ahead while answers
// are read — and returns the completed calls per second.
func (s *Session) Pipelined(req Request, n, depth int) (float64, error) {
	first := s.ids(n)
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = req(first + i)
	}
	slots := make(chan struct{}, depth)
	writeErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	go func() {
		for _, line := range lines {
			select {
			case slots <- struct{}{}:
			case <-stop:
				writeErr <- nil
				return
			}
			if err := s.Send(line); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	for range n {
		got, err := s.Recv()
		if err != nil {
			return 0, err
		}
		if err := quickCheck(got); err != nil {
			return 0, err
		}
		<-slots
	}
	elapsed := time.Since(start)
	if err := <-writeErr; err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

// quickCheck rejects an error answer without decoding it, so that checking costs the client
// little while the server is measured at full speed.
func quickCheck(line []byte) error {
	switch {
	case bytes.Contains(line, []byte(`"isError":true`)):
		return fmt.Errorf("tool error answer: %.300s", line)
	case !bytes.Contains(line, []byte(`"result":`)):
		return fmt.Errorf("error answer: %.300s", line)
	}
	return nil
}
