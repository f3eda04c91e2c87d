package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
)

// call is one tools/call in flight.
type call struct {
	id     json.RawMessage
	key    string
	name   string
	ctx    context.Context
	cancel context.CancelFunc
	reply  replyFunc
	f      features
	args   int // bytes of arguments held

	mu           sync.Mutex
	done         bool // the answer is being sent: no more progress
	cancelled    bool // the client cancelled: no answer at all
	lastProgress float64
}

// callToolResult is the tools/call result as sent.
type callToolResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// callTool validates a tools/call and admits it into the worker pool; the answer is sent when
// the handler returns, unless the client cancelled the request. Only the reading goroutine
// calls it.
func (ss *session) callTool(in inbound, e era, reply replyFunc) {
	var name string
	if raw, ok := in.params["name"]; !ok || json.Unmarshal(raw, &name) != nil {
		reply(errorResponse(in.id, &Error{Code: CodeInvalidParams, Message: "invalid params: name is required and must be a string"}))
		return
	}
	if !ss.s.catalog.names[name] {
		reply(errorResponse(in.id, unknownTool(name)))
		return
	}
	args := json.RawMessage("{}")
	if raw, ok := in.params["arguments"]; ok && string(raw) != "null" {
		if len(raw) == 0 || raw[0] != '{' {
			reply(errorResponse(in.id, &Error{Code: CodeInvalidParams, Message: "invalid params: arguments must be an object"}))
			return
		}
		args = raw
	}
	meta, rpcErr := requestMeta(in.params)
	if rpcErr != nil {
		reply(errorResponse(in.id, rpcErr))
		return
	}
	token := meta["progressToken"]
	if !readableID(token) {
		token = nil
	}

	c, rpcErr := ss.admit(in.id, name, len(args), reply, featuresOf(e.version))
	if rpcErr != nil {
		reply(errorResponse(in.id, rpcErr))
		return
	}
	req := CallRequest{Name: name, Arguments: args, ProtocolVersion: e.version}
	if token != nil {
		req.Progress = func(progress, total float64, message string) { ss.progress(c, token, progress, total, message) }
	}
	// The first call a frame admits is run by the goroutine that read the frame (readLoop);
	// any other (a batch's) by a goroutine of its own.
	if ss.next == nil {
		ss.next = func() { ss.run(c, req) }
		return
	}
	go ss.run(c, req)
}

func unknownTool(name string) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid params: unknown tool %q", name)}
}

// admit registers a call in flight, within the session's bounds.
func (ss *session) admit(id json.RawMessage, name string, args int, reply replyFunc, f features) (*call, *Error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	key := idKey(id)
	switch {
	case ss.stopped:
		return nil, &Error{Code: CodeInternal, Message: "server is shutting down"}
	case ss.inflight[key] != nil:
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: id is already used by a request in flight"}
	case len(ss.inflight) >= ss.maxInflight() || ss.inflightArg+args > maxInflightArgBytes:
		return nil, &Error{Code: CodeInternal, Message: "server busy: too many requests in flight; retry when some have answered"}
	}
	ctx, cancel := context.WithCancel(ss.handlerCtx)
	c := &call{id: id, key: key, name: name, ctx: ctx, cancel: cancel, reply: reply, f: f, args: args, lastProgress: math.Inf(-1)}
	ss.inflight[key] = c
	ss.inflightArg += args
	ss.calls.Add(1)
	return c, nil
}

// run waits for a worker slot, calls the handler and answers.
func (ss *session) run(c *call, req CallRequest) {
	defer ss.calls.Done()
	defer c.cancel()
	select {
	case ss.sem <- struct{}{}:
	case <-c.ctx.Done():
		ss.finish(c, CallResult{}, c.ctx.Err())
		return
	}
	res, err := ss.invoke(c.ctx, req)
	<-ss.sem
	ss.finish(c, res, err)
}

// invoke calls the handler, turning a panic into an error so one bad call never takes the
// server down.
func (ss *session) invoke(ctx context.Context, req CallRequest) (res CallResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			ss.s.opts.Logger.Error("tool handler panicked", "tool", req.Name, "panic", p, "stack", string(debug.Stack()))
			err = errors.New("handler panicked")
		}
	}()
	return ss.s.h.CallTool(ctx, req)
}

// finish answers a call, unless the client cancelled it.
func (ss *session) finish(c *call, res CallResult, err error) {
	ss.mu.Lock()
	delete(ss.inflight, c.key)
	ss.inflightArg -= c.args
	ss.mu.Unlock()

	c.mu.Lock()
	c.done = true
	cancelled := c.cancelled
	c.mu.Unlock()
	if cancelled {
		c.reply(nil)
		return
	}
	c.reply(ss.callResponse(c, res, err))
}

// callResponse builds the answer to a finished call.
func (ss *session) callResponse(c *call, res CallResult, err error) *response {
	log := ss.s.opts.Logger
	if err != nil {
		var rpcErr *Error
		switch {
		case errors.As(err, &rpcErr):
			if rpcErr.Code == CodeInternal {
				log.Error("tool call failed", "tool", c.name, "err", rpcErr)
			}
			return errorResponse(c.id, safeError(rpcErr, log))
		case errors.Is(err, ErrUnknownTool):
			return errorResponse(c.id, unknownTool(c.name))
		case c.ctx.Err() != nil:
			log.Warn("tool call cancelled by shutdown", "tool", c.name, "err", err)
			return errorResponse(c.id, &Error{Code: CodeInternal, Message: "request cancelled: the server is shutting down"})
		default:
			log.Error("tool call failed", "tool", c.name, "err", err)
			return errorResponse(c.id, internalError())
		}
	}
	structured, cerr := compactJSON(res.Structured, nil)
	if cerr != nil || len(structured) == 0 || structured[0] != '{' {
		log.Error("tool returned a result that is not a JSON object", "tool", c.name, "err", cerr)
		return errorResponse(c.id, internalError())
	}
	out := callToolResult{
		Content: []textContent{{Type: "text", Text: string(structured)}},
		IsError: res.IsError,
	}
	// Clients check any structuredContent against the tool's output schema, error results
	// included, so an error object travels as text alone when the tool declares one.
	if c.f.structured && !(res.IsError && ss.s.catalog.hasOutput[c.name]) {
		out.StructuredContent = structured
	}
	if c.f.modern {
		out.ResultType = resultTypeComplete
	}
	return resultResponse(c.id, out)
}

// safeError returns e with its data rendered now, so an unencodable value cannot cost the
// request its answer: such data is dropped and logged.
func safeError(e *Error, log interface{ Error(string, ...any) }) *Error {
	out := &Error{Code: e.Code, Message: e.Message}
	if e.Data == nil {
		return out
	}
	raw, err := json.Marshal(e.Data)
	if err != nil {
		log.Error("dropping unencodable error data", "err", err)
		return out
	}
	out.Data = json.RawMessage(raw)
	return out
}

// cancelCall handles notifications/cancelled: the handler's context is cancelled and the
// request gets no answer. A request already answered, or unknown, is ignored.
func (ss *session) cancelCall(id json.RawMessage) {
	ss.mu.Lock()
	c := ss.inflight[idKey(id)]
	ss.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.done {
		c.cancelled = true
	}
	c.mu.Unlock()
	c.cancel()
}

// progressParams are the params of notifications/progress.
type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         float64         `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// progress sends one notifications/progress for a call, dropping values that do not increase,
// that JSON cannot carry, or that come after the call was answered or cancelled.
func (ss *session) progress(c *call, token json.RawMessage, progress, total float64, message string) {
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return
	}
	if math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		total = 0
	}
	if !c.f.progressMessage {
		message = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.cancelled || progress <= c.lastProgress {
		return
	}
	c.lastProgress = progress
	// Written under the call's lock so no progress can follow the call's answer.
	ss.sendFrame(notification{JSONRPC: "2.0", Method: notifyProgress, Params: progressParams{
		ProgressToken: token, Progress: progress, Total: total, Message: message,
	}})
}
