package mcp

import (
	"encoding/json"
	"fmt"
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

// era is how one request is served: at which revision, and whether statelessly (modern).
type era struct {
	version string
	modern  bool
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
