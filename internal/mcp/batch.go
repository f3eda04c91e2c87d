package mcp

import "sync"

// replyFunc receives the one answer to a message: a response, or nil when there is none to
// send (a notification, a cancelled request). It is called exactly once per message.
type replyFunc func(*response)

// batch collects the answers to the elements of one JSON-RPC batch and writes them as a single
// array, in the order of the requests, once every element has answered (or been silenced). A
// batch of notifications only is answered with nothing, as JSON-RPC requires.
type batch struct {
	mu        sync.Mutex
	remaining int
	slots     []*response // by element index; nil for no answer
	flush     func([]*response)
}

func newBatch(n int, flush func([]*response)) *batch {
	return &batch{remaining: n, slots: make([]*response, n), flush: flush}
}

// reply returns the replyFunc of element i.
func (b *batch) reply(i int) replyFunc {
	return func(r *response) {
		b.mu.Lock()
		b.slots[i] = r
		b.remaining--
		done := b.remaining == 0
		b.mu.Unlock()
		if !done {
			return
		}
		answers := make([]*response, 0, len(b.slots))
		for _, r := range b.slots {
			if r != nil {
				answers = append(answers, r)
			}
		}
		if len(answers) > 0 {
			b.flush(answers)
		}
	}
}
