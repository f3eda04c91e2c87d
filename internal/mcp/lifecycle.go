package mcp

import "encoding/json"

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
