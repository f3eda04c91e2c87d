package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/runlens/runlens/internal/jsonread"
)

// nullID is the id of a response to a message whose own id could not be read.
var nullID = json.RawMessage("null")

// response is one JSON-RPC response object as written on the wire.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// wireError is the error member of a response.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// notification is a server-to-client message that expects no answer.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// resultResponse is a success answer.
func resultResponse(id json.RawMessage, result any) *response {
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

// errorResponse is an error answer; e's data must already be encodable.
func errorResponse(id json.RawMessage, e *Error) *response {
	return &response{JSONRPC: "2.0", ID: id, Error: &wireError{Code: e.Code, Message: e.Message, Data: e.Data}}
}

// encodeLine renders v as one frame: compact JSON and a trailing newline. HTML escaping is off
// so tool text reaches the client byte for byte.
func encodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return buf.Bytes(), nil
}

// messageKind classifies one decoded JSON object.
type messageKind int

const (
	kindRequest      messageKind = iota // has a readable id and a method: answer exactly once
	kindNotification                    // no id: never answered
	kindResponse                        // a response from the peer: the server sends no requests, so ignored
	kindInvalid                         // answered with an error, with the id when it is readable
)

// inbound is one decoded message.
type inbound struct {
	kind   messageKind
	id     json.RawMessage // the id as sent, for echoing; nullID when unreadable
	method string
	params map[string]json.RawMessage // nil when absent
	err    *Error                     // the reason when kind is kindInvalid
}

// decodeObject classifies a JSON object frame. It never fails: what cannot be served becomes a
// kindInvalid message carrying the error to answer with.
func decodeObject(obj map[string]json.RawMessage) inbound {
	rawID, hasID := obj["id"]
	rawMethod, hasMethod := obj["method"]
	in := inbound{id: nullID}
	if hasID && readableID(rawID) {
		in.id = echoableID(rawID)
	}
	if !hasMethod {
		_, hasResult := obj["result"]
		_, hasError := obj["error"]
		if hasResult || hasError {
			in.kind = kindResponse
			return in
		}
		return invalid(in, "invalid request: method is missing")
	}
	if json.Unmarshal(rawMethod, &in.method) != nil {
		in.method = ""
		if !hasID {
			in.kind = kindNotification
			return in
		}
		return invalid(in, "invalid request: method must be a string")
	}
	if !hasID {
		in.kind = kindNotification
		if params, ok := decodeParams(obj["params"]); ok {
			in.params = params
		}
		return in
	}
	if !readableID(rawID) {
		return invalid(in, "invalid request: id must be a string or a number")
	}
	if string(obj["jsonrpc"]) != `"2.0"` {
		return invalid(in, `invalid request: jsonrpc must be "2.0"`)
	}
	rawParams, hasParams := obj["params"]
	params, ok := decodeParams(rawParams)
	if hasParams && !ok {
		in.kind = kindInvalid
		in.err = &Error{Code: CodeInvalidParams, Message: "invalid params: params must be an object"}
		return in
	}
	in.params = params
	in.kind = kindRequest
	return in
}

// invalid marks in as an invalid request answered with msg.
func invalid(in inbound, msg string) inbound {
	in.kind = kindInvalid
	in.err = &Error{Code: CodeInvalidRequest, Message: msg}
	return in
}

// readableID reports whether raw is an id the server can echo: a string or a number. MCP
// forbids null ids; objects, arrays and booleans are not ids.
func readableID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// echoableID returns an id fit to be written back: as sent when it is valid UTF-8 (the rule for
// every JSON text), else read the way encoding/json reads every other string of the message,
// each invalid byte becoming U+FFFD, and written again. The request is then served and answered
// once, with the id the client's own decoder most likely sees in its place, and idKey finds the
// same call by either form. Refusing it instead would answer with id null, which no client can
// match to its request.
func echoableID(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nullID // not a string (numbers are ASCII): cannot happen for a readable id
	}
	fixed, err := json.Marshal(s)
	if err != nil {
		return nullID
	}
	return fixed
}

// idKey canonicalises an id so the same request is found however its string was escaped.
func idKey(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
	}
	return "n" + string(raw)
}

// decodeParams decodes a params member: absent and null mean none; anything but an object is
// not valid MCP params.
func decodeParams(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	if raw[0] != '{' {
		return nil, false
	}
	params, err := jsonread.Members(raw)
	if err != nil {
		return nil, false
	}
	return params, true
}
