package telemetry

// SemanticsVersion names the meaning of the engine's answers: the rules of docs/semantics.md as
// this code implements them. A store recomputes what it derived under another version. A golden
// test digests what the rules answer over the fixture of every conventions preset; a change of
// that digest fails it until this constant is raised and the golden is written again
// (UPDATE_GOLDEN=1), so the product binary carries a number instead of the fixture.
const SemanticsVersion = 1
