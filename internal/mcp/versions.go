package mcp

import "slices"

// Protocol revisions this server speaks. The legacy ones negotiate once per process through
// initialize; the modern one is declared on every request.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// legacyVersions are the handshake revisions, newest first; the first one is what an
// initialize asking for anything else is answered with.
var legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// supportedVersions is every revision served, newest first, as advertised by server/discover
// and by the unsupported-version error.
var supportedVersions = append([]string{Version20260728}, legacyVersions...)

// SupportedVersions returns every protocol revision the server speaks, newest first.
func SupportedVersions() []string { return slices.Clone(supportedVersions) }

// isLegacyVersion reports whether v is a handshake revision this server speaks.
func isLegacyVersion(v string) bool { return slices.Contains(legacyVersions, v) }

// isModernVersion reports whether v is a per-request (stateless) revision this server speaks.
func isModernVersion(v string) bool { return v == Version20260728 }

// negotiate picks the legacy revision answered to an initialize asking for requested: the
// same one when supported, else the newest, which the client may accept or disconnect from.
func negotiate(requested string) string {
	if isLegacyVersion(requested) {
		return requested
	}
	return legacyVersions[0]
}

// features says what a revision allows on the wire. Revisions are ISO dates, so string order
// is release order.
type features struct {
	annotations     bool // tool annotations (2025-03-26)
	progressMessage bool // notifications/progress message (2025-03-26)
	batches         bool // JSON-RPC batches (only 2025-03-26 requires receiving them)
	structured      bool // tool title, outputSchema, structuredContent, serverInfo.title (2025-06-18)
	modern          bool // resultType, ttlMs, cacheScope (2026-07-28)
}

// featuresOf returns the wire features of revision v.
func featuresOf(v string) features {
	return features{
		annotations:     v >= Version20250326,
		progressMessage: v >= Version20250326,
		batches:         v == Version20250326,
		structured:      v >= Version20250618,
		modern:          v >= Version20260728,
	}
}
