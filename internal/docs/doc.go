// Package docs serves a project's Markdown documentation as a searchable corpus.
//
// A Corpus indexes every Markdown file under a docs root once, then keeps the index current with
// a cheap, rate-limited stat walk that re-parses only files whose size or modification time
// changed. It answers three questions for a coding agent: which documents mention these words
// (Search), which documents exist (List), and what does this document or section say (Get).
//
// The root is a trust boundary: symbolic links are never followed, every read goes through an
// os.Root so no path can leave the docs root, and slugs are only ever looked up in the index,
// never joined into a file path.
package docs
