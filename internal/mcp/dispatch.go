package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/runlens/runlens/internal/jsonread"
)

// Method names the server answers.
const (
	methodInitialize  = "initialize"
	methodPing        = "ping"
	methodDiscover    = "server/discover"
	methodListTools   = "tools/list"
	methodCallTool    = "tools/call"
	notifyCancelled   = "notifications/cancelled"
	notifyProgress    = "notifications/progress"
	notifyInitialized = "notifications/initialized"
)

// jsonSpace is JSON's insignificant whitespace: only these may surround a message (Unicode
// spaces would make it invalid JSON).
const jsonSpace = " \t\r\n"

// handleLine serves one non-oversized frame.
func (ss *session) handleLine(line []byte) {
	trimmed := bytes.Trim(line, jsonSpace)
	if len(trimmed) == 0 {
		return
	}
	switch trimmed[0] {
	case '[':
		ss.handleBatch(trimmed)
	case '{':
		obj, err := jsonread.Members(trimmed)
		if err != nil {
			// Well-formed JSON nested too deep for encoding/json is still answered with its id.
			in, ok := decodeDeep(trimmed)
			if !ok {
				ss.send(parseError())
				return
			}
			ss.serveDecoded(in, ss.send)
			return
		}
		ss.handleMessage(obj, ss.send)
	default:
		if json.Valid(trimmed) {
			ss.send(errorResponse(nullID, &Error{Code: CodeInvalidRequest, Message: "invalid request: a message must be a JSON object"}))
			return
		}
		ss.send(parseError())
	}
}

// parseError answers a frame that is not JSON; its id cannot be known.
func parseError() *response {
	return errorResponse(nullID, &Error{Code: CodeParseError, Message: "parse error: the message is not valid JSON"})
}

// handleBatch serves a JSON array: element by element when the negotiated revision receives
// batches, else as one invalid request.
func (ss *session) handleBatch(raw []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		ss.send(parseError())
		return
	}
	ss.mu.Lock()
	allowed := ss.initialized && featuresOf(ss.version).batches
	ss.mu.Unlock()
	if !allowed {
		ss.send(errorResponse(nullID, &Error{Code: CodeInvalidRequest, Message: "invalid request: batches are accepted only under protocol revision " + Version20250326}))
		return
	}
	if len(elems) == 0 {
		ss.send(errorResponse(nullID, &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}))
		return
	}
	b := newBatch(len(elems), func(rs []*response) { ss.sendFrame(rs) })
	for i, elem := range elems {
		reply := b.reply(i)
		obj, err := jsonread.Members(elem)
		if len(elem) == 0 || elem[0] != '{' || err != nil {
			reply(errorResponse(nullID, &Error{Code: CodeInvalidRequest, Message: "invalid request: a batch element must be a JSON object"}))
			continue
		}
		ss.handleMessage(obj, reply)
	}
}

// handleMessage serves one decoded JSON object; reply receives its one answer.
func (ss *session) handleMessage(obj map[string]json.RawMessage, reply replyFunc) {
	ss.serveDecoded(decodeObject(obj), reply)
}

// serveDecoded serves one classified message; reply receives its one answer (nil for none).
func (ss *session) serveDecoded(in inbound, reply replyFunc) {
	switch in.kind {
	case kindNotification:
		ss.handleNotification(in)
		reply(nil)
	case kindResponse:
		ss.s.opts.Logger.Debug("ignoring a response: this server sends no requests")
		reply(nil)
	case kindInvalid:
		reply(errorResponse(in.id, in.err))
	case kindRequest:
		ss.handleRequest(in, reply)
	}
}

// handleNotification acts on the notifications the server understands and ignores the rest;
// none is ever answered.
func (ss *session) handleNotification(in inbound) {
	switch in.method {
	case notifyCancelled:
		var id json.RawMessage
		if raw, ok := in.params["requestId"]; ok && readableID(raw) {
			id = raw
		}
		if id != nil {
			ss.cancelCall(id)
		}
	case notifyInitialized:
	default:
		ss.s.opts.Logger.Debug("ignoring notification", "method", in.method)
	}
}

// handleRequest routes one request with a readable id.
func (ss *session) handleRequest(in inbound, reply replyFunc) {
	e, ok, rpcErr := ss.eraOf(in)
	if rpcErr != nil {
		reply(errorResponse(in.id, rpcErr))
		return
	}
	f := featuresOf(e.version)
	switch {
	case e.modern:
		ss.handleModern(in, e, reply)
	case in.method == methodInitialize:
		reply(ss.initialize(in))
	case in.method == methodPing:
		reply(resultResponse(in.id, struct{}{}))
	case in.method == methodDiscover:
		reply(ss.discover(in))
	case !ok:
		reply(errorResponse(in.id, &Error{Code: CodeInvalidRequest, Message: notInitializedMessage}))
	case in.method == methodListTools:
		reply(ss.listTools(in, f))
	case in.method == methodCallTool:
		ss.callTool(in, e, reply)
	default:
		reply(errorResponse(in.id, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", in.method)}))
	}
}

// handleModern routes a stateless request. The modern revision has no handshake and no ping:
// those, like any method it does not define, are not found.
func (ss *session) handleModern(in inbound, e era, reply replyFunc) {
	switch in.method {
	case methodDiscover:
		reply(ss.discover(in))
	case methodListTools:
		reply(ss.listTools(in, featuresOf(e.version)))
	case methodCallTool:
		ss.callTool(in, e, reply)
	default:
		reply(errorResponse(in.id, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q is not part of protocol revision %s", in.method, e.version)}))
	}
}

// listTools answers tools/list for one page.
func (ss *session) listTools(in inbound, f features) *response {
	var cursor string
	if raw, ok := in.params["cursor"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &cursor) != nil {
			return errorResponse(in.id, &Error{Code: CodeInvalidParams, Message: "invalid params: cursor must be a string"})
		}
	}
	res, rpcErr := ss.s.catalog.page(f, cursor, ss.s.opts.PageSize)
	if rpcErr != nil {
		return errorResponse(in.id, rpcErr)
	}
	return resultResponse(in.id, res)
}
