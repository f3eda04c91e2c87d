package shape

import "github.com/runlens/runlens/internal/jsonstr"

// The answer bytes Fit measures must be the bytes that are sent, and the glue embeds them with
// encoding/json, which re-escapes HTML characters inside raw messages. So strings are quoted
// exactly as encoding/json quotes them in its HTML-safe mode: re-embedding then changes nothing
// and the measured size stays true.

// appendQuoted appends s as a JSON string literal, byte for byte as encoding/json writes it.
func appendQuoted(dst []byte, s string) []byte { return jsonstr.Append(dst, s, true) }

// quotedLen is len(appendQuoted(nil, s)) without building it.
func quotedLen(s string) int { return jsonstr.Len(s, true) }

// isPlain reports whether s is quoted without any escape, so its quoted length is len(s)+2 for
// every prefix too; Fit uses it to measure candidate cuts without rescanning.
func isPlain(s string) bool { return jsonstr.Plain(s, true) }
