package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxJSONDepth is how deep encoding/json reads: it refuses a whole message holding any value
// nested deeper, even a member the server would never look at.
const maxJSONDepth = 10000

// readTopLevel reads the members of an object frame that encoding/json refused as a whole,
// token by token and so without a depth limit, so that a request nested too deep can still be
// answered with its own id. It returns every member as written and the names of those too
// deep to decode on their own; ok is false when the frame is not one well-formed JSON object
// (then it is a parse error, as before). Memory stays bounded by the frame ceiling.
func readTopLevel(frame []byte) (obj map[string]json.RawMessage, deep map[string]bool, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	obj, deep = map[string]json.RawMessage{}, map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, nil, false
		}
		start := dec.InputOffset()
		if skipValue(dec) != nil {
			return nil, nil, false
		}
		raw := bytes.TrimLeft(frame[start:dec.InputOffset()], jsonSpace+":")
		obj[key] = raw
		deep[key] = !json.Valid(raw)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, false // something follows the object
	}
	return obj, deep, true
}

// skipValue reads one whole value, however deep, keeping only a count of open brackets.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// decodeDeep classifies an object frame that encoding/json refused, or reports false when the
// frame is not JSON at all. Each member is judged as decodeObject judges it, so a deep id is
// unreadable and a deep method is not a string; deep params get a message that says why they
// could not be read, under -32602 like any other params that are not a readable object: the
// request itself (jsonrpc, id, method) is sound, so it is not an invalid request.
func decodeDeep(frame []byte) (inbound, bool) {
	obj, deep, ok := readTopLevel(frame)
	if !ok {
		return inbound{}, false
	}
	in := decodeObject(obj)
	if in.kind == kindInvalid && in.err.Code == CodeInvalidParams && deep["params"] {
		in.err = &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid params: params are nested too deeply to be read (the limit is %d levels)", maxJSONDepth)}
	}
	return in, true
}
