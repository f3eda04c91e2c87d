// Package schemas is the runtime of the generated gen package: it embeds the generated schema
// files gen reads, bundled/ (the published, self-contained schemas) and listed/ (what
// tools/list serves of each tool schema), and holds the version gate. It lives here because an
// embed directive reads only the folder of the embedding file and below; the JSON files beside
// it are the source of truth for every tool contract.
package schemas

import "embed"

// Files holds bundled/ and listed/, as `make generate` wrote them.
//
//go:embed bundled listed
var Files embed.FS

// GenVersion1 is referenced by every generated file set (`const _ = schemas.GenVersion1`).
// Bump it (GenVersion2, removing GenVersion1) when the generated code's expectations of this
// runtime change, so that code generated for an older runtime fails to compile instead of
// misbehaving at run time.
const GenVersion1 = true
