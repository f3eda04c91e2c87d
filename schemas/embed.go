// Package schemas embeds the generated schema files that the gen package serves and validates
// with: bundled/ (the published, self-contained schemas) and listed/ (what tools/list serves of
// each tool schema). It lives here because go:embed reads only the folder of the embedding file
// and below; the JSON files beside it are the source of truth for every tool contract.
package schemas

import "embed"

// Files holds bundled/ and listed/, as `make generate` wrote them.
//
//go:embed bundled listed
var Files embed.FS
