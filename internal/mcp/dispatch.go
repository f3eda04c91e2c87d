package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// Per-request _meta keys of the modern era.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// notInitializedMessage names both ways into a session, so a client that skipped the handshake
// learns how to recover instead of hanging.
var notInitializedMessage = fmt.Sprintf(
	`invalid request: not initialized: send "initialize" first, or make the request stateless by sending params._meta[%q] = %q with params._meta[%q]`,
	metaProtocolVersion, Version20260728, metaClientCapabilities)

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
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			ss.send(parseError())
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
		var obj map[string]json.RawMessage
		if len(elem) == 0 || elem[0] != '{' || json.Unmarshal(elem, &obj) != nil {
			reply(errorResponse(nullID, &Error{Code: CodeInvalidRequest, Message: "invalid request: a batch element must be a JSON object"}))
			continue
		}
		ss.handleMessage(obj, reply)
	}
}

// handleMessage serves one decoded JSON object; reply receives its one answer.
func (ss *session) handleMessage(obj map[string]json.RawMessage, reply replyFunc) {
	in := decodeObject(obj)
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

// era is how one request is served: at which revision, and whether statelessly (modern).
type era struct {
	version string
	modern  bool
}

// handleRequest routes one request with a readable id.
func (ss *session) handleRequest(in inbound, reply replyFunc) {
	if in.method == methodInitialize {
		reply(ss.initialize(in))
		return
	}
	e, ok, rpcErr := ss.eraOf(in)
	if rpcErr != nil {
		reply(errorResponse(in.id, rpcErr))
		return
	}
	f := featuresOf(e.version)
	switch {
	case in.method == methodPing:
		reply(resultResponse(in.id, pingResult(f)))
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

// eraOf decides how a request is served. ok is false for a legacy request before initialize.
// A process that answered initialize stays legacy: per-request versions are then ignored.
func (ss *session) eraOf(in inbound) (e era, ok bool, rpcErr *Error) {
	ss.mu.Lock()
	initialized, version := ss.initialized, ss.version
	ss.mu.Unlock()
	if initialized {
		return era{version: version}, true, nil
	}
	meta, rpcErr := requestMeta(in.params)
	if rpcErr != nil {
		return era{}, false, rpcErr
	}
	rawVersion, declared := meta[metaProtocolVersion]
	if !declared {
		return era{version: legacyVersions[0]}, false, nil
	}
	var requested string
	if json.Unmarshal(rawVersion, &requested) != nil {
		return era{}, false, invalidMeta(metaProtocolVersion, "must be a string")
	}
	if isLegacyVersion(requested) {
		// A handshake revision carries no per-request semantics: the handshake is still due.
		return era{version: requested}, false, nil
	}
	if !isModernVersion(requested) {
		return era{}, false, &Error{
			Code:    CodeUnsupportedVersion,
			Message: "unsupported protocol version",
			Data:    unsupportedVersionData{Supported: SupportedVersions(), Requested: requested},
		}
	}
	if raw, ok := meta[metaClientCapabilities]; !ok || !isJSONObject(raw) {
		return era{}, false, invalidMeta(metaClientCapabilities, "is required and must be an object")
	}
	if raw, ok := meta[metaClientInfo]; ok && !isJSONObject(raw) {
		return era{}, false, invalidMeta(metaClientInfo, "must be an object")
	}
	return era{version: requested, modern: true}, true, nil
}

// unsupportedVersionData is the data of the unsupported-version error: what the client may
// retry with.
type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

func invalidMeta(key, why string) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid params: params._meta[%q] %s", key, why)}
}

// requestMeta decodes params._meta, which must be an object when present.
func requestMeta(params map[string]json.RawMessage) (map[string]json.RawMessage, *Error) {
	raw, ok := params["_meta"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var meta map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &meta) != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: params._meta must be an object"}
	}
	return meta, nil
}

// capabilities is what the server offers: tools, with a list that never changes.
type capabilities struct {
	Tools toolsCapability `json:"tools"`
}

type toolsCapability struct {
	ListChanged bool `json:"listChanged"`
}

// implementation is the server's identity.
type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

func (ss *session) serverInfo(f features) implementation {
	info := implementation{Name: ss.s.opts.Name, Version: ss.s.opts.Version}
	if f.structured {
		info.Title = ss.s.opts.Title
	}
	return info
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    capabilities   `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// initialize performs the legacy handshake: echo a supported revision, else offer the newest.
func (ss *session) initialize(in inbound) *response {
	var requested string
	if raw, ok := in.params["protocolVersion"]; !ok || json.Unmarshal(raw, &requested) != nil {
		return errorResponse(in.id, &Error{Code: CodeInvalidParams, Message: "invalid params: protocolVersion is required and must be a string"})
	}
	version := negotiate(requested)
	ss.mu.Lock()
	already := ss.initialized
	if !already {
		ss.initialized, ss.version = true, version
	}
	ss.mu.Unlock()
	if already {
		return errorResponse(in.id, &Error{Code: CodeInvalidRequest, Message: "invalid request: already initialized"})
	}
	ss.s.opts.Logger.Debug("initialized", "requested", requested, "negotiated", version)
	return resultResponse(in.id, initializeResult{
		ProtocolVersion: version,
		Capabilities:    capabilities{},
		ServerInfo:      ss.serverInfo(featuresOf(version)),
		Instructions:    ss.s.opts.Instructions,
	})
}

// pingResult is the empty result, typed as complete in the modern era.
func pingResult(f features) any {
	if f.modern {
		return cacheable{ResultType: resultTypeComplete}
	}
	return struct{}{}
}

type discoverResult struct {
	ResultType        string                    `json:"resultType"`
	SupportedVersions []string                  `json:"supportedVersions"`
	Capabilities      capabilities              `json:"capabilities"`
	Instructions      string                    `json:"instructions,omitempty"`
	TTLMs             int                       `json:"ttlMs"`
	CacheScope        string                    `json:"cacheScope"`
	Meta              map[string]implementation `json:"_meta"`
}

// discover answers server/discover: every revision served and who the server is, without any
// handshake. Outside the modern era the request must still declare its revision in _meta.
func (ss *session) discover(in inbound) *response {
	meta, _ := requestMeta(in.params)
	if _, declared := meta[metaProtocolVersion]; !declared {
		return errorResponse(in.id, invalidMeta(metaProtocolVersion, "is required"))
	}
	return resultResponse(in.id, discoverResult{
		ResultType:        resultTypeComplete,
		SupportedVersions: SupportedVersions(),
		Capabilities:      capabilities{},
		Instructions:      ss.s.opts.Instructions,
		TTLMs:             listTTLMs,
		CacheScope:        "public",
		Meta:              map[string]implementation{metaServerInfo: ss.serverInfo(featuresOf(Version20260728))},
	})
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
