package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// maxNesting bounds how deep objects and arrays may nest. The deepest key of the schema is a few
// levels down; a file nested deeper is refused before anything walks it, so no decoder, pointer
// or validator ever pays for its depth.
const maxNesting = 64

// maxPointerBytes bounds the JSON pointers the parser records. A key below a longer pointer is
// located at its nearest recorded ancestor, so a file of long keys cannot make every child copy
// its parent's pointer.
const maxPointerBytes = 1024

// document is a parsed configuration file that remembers where each key sits, so every problem
// can be reported at a line and column, not only as a JSON pointer.
type document struct {
	data    []byte
	value   any              // the decoded value, numbers as json.Number (what the validator wants)
	offsets map[string]int64 // JSON pointer → byte offset of its key (or of the value in arrays)
	dups    []dupKey         // keys that appear twice in one object, at most maxErrors
	lines   *lineIndex       // built on the first position asked for
}

// dupKey is the second occurrence of a key in one object.
type dupKey struct {
	ptr    string
	offset int64
}

// syntaxError is invalid JSON at a byte offset, or a file beyond what the parser accepts.
type syntaxError struct {
	offset int64
	msg    string
	fix    string // "" for the fix of a syntax error
}

func (e *syntaxError) Error() string { return e.msg }

// parseDocument decodes data in one pass, recording key offsets and duplicate keys. It rejects
// anything after the top-level value.
func parseDocument(data []byte) (*document, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if off := tooDeep(data, maxNesting); off >= 0 {
		return nil, &syntaxError{offset: off,
			msg: fmt.Sprintf("objects and arrays nest more than %d levels deep here", maxNesting),
			fix: fmt.Sprintf("nest at most %d levels; no setting of %s is nearly that deep", maxNesting, FileName)}
	}
	d := &document{data: data, offsets: map[string]int64{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{doc: d, dec: dec}
	v, err := w.value("")
	if err != nil {
		return nil, w.syntax(err)
	}
	end := w.next()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &syntaxError{offset: end, msg: "unexpected content after the top-level JSON value"}
	}
	d.value = v
	return d, nil
}

// tooDeep returns the offset of the first bracket that opens level limit+1, or -1. It reads the
// bytes once, skipping strings, and leaves every other judgement of the syntax to the decoder.
func tooDeep(data []byte, limit int) int64 {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > limit {
				return int64(i)
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

type walker struct {
	doc *document
	dec *json.Decoder
}

// next is the offset of the next token: the decoder's position past blanks and separators.
func (w *walker) next() int64 {
	off := w.dec.InputOffset()
	data := w.doc.data
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (w *walker) value(ptr string) (any, error) {
	if _, ok := w.doc.offsets[ptr]; !ok {
		w.doc.offsets[ptr] = w.next()
	}
	tok, err := w.dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for w.dec.More() {
			off := w.next()
			kt, err := w.dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			child := ptr
			if len(ptr)+len(key) < maxPointerBytes {
				child = ptr + "/" + escapePointer(key)
			}
			if _, seen := obj[key]; seen {
				if len(w.doc.dups) < maxErrors {
					w.doc.dups = append(w.doc.dups, dupKey{ptr: child, offset: off})
				}
			} else if _, ok := w.doc.offsets[child]; !ok {
				w.doc.offsets[child] = off
			}
			v, err := w.value(child)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, err
		}
		return obj, nil
	case json.Delim('['):
		arr := []any{}
		for i := 0; w.dec.More(); i++ {
			child := ptr
			if len(ptr) < maxPointerBytes {
				child = ptr + "/" + strconv.Itoa(i)
			}
			v, err := w.value(child)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, err
		}
		return arr, nil
	}
	return tok, nil
}

// syntax turns a decoder failure into a syntaxError at the best offset known.
func (w *walker) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Through the Token API, Offset is the failing byte for structural errors.
		return &syntaxError{offset: se.Offset, msg: se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &syntaxError{offset: int64(len(w.doc.data)), msg: "unexpected end of JSON input"}
	}
	return &syntaxError{offset: w.dec.InputOffset(), msg: err.Error()}
}

// lineIndex answers positions in a file in time independent of how many are asked for: a
// file with thousands of problems on one long line is located in one pass over it.
type lineIndex struct {
	starts []int // offset of the first byte of each line
	// chars[k] counts the characters before offset k*charStep. A character is counted at its
	// first byte (any byte that is not a UTF-8 continuation byte), so counts add up across any
	// split, even inside invalid UTF-8.
	chars []int
}

const charStep = 256

func newLineIndex(data []byte) *lineIndex {
	x := &lineIndex{starts: []int{0}, chars: make([]int, 0, len(data)/charStep+1)}
	n := 0
	for i, c := range data {
		if i%charStep == 0 {
			x.chars = append(x.chars, n)
		}
		if c&0xC0 != 0x80 {
			n++
		}
		if c == '\n' {
			x.starts = append(x.starts, i+1)
		}
	}
	return x
}

// charsBefore counts the characters of data before offset.
func (x *lineIndex) charsBefore(data []byte, offset int) int {
	k := offset / charStep
	if k >= len(x.chars) {
		k = len(x.chars) - 1
	}
	if k < 0 {
		return 0
	}
	n := x.chars[k]
	for _, c := range data[k*charStep : offset] {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// position is the 1-based line and the 1-based column counted in characters, as editors show
// them, of a byte offset.
func (x *lineIndex) position(data []byte, offset int64) (line, col int) {
	off := int(min(max(offset, 0), int64(len(data))))
	line = sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off })
	start := x.starts[line-1]
	return line, x.charsBefore(data, off) - x.charsBefore(data, start) + 1
}

// position converts a byte offset into a 1-based line and a 1-based column counted in
// characters; for one position in a file (several use document.position).
func position(data []byte, offset int64) (line, col int) {
	return newLineIndex(data).position(data, offset)
}

// position is the line and column of a byte offset of the document.
func (d *document) position(offset int64) (line, col int) {
	if d.lines == nil {
		d.lines = newLineIndex(d.data)
	}
	return d.lines.position(d.data, offset)
}

// locate finds the line and column of a pointer, or of its nearest ancestor present in the file
// (a missing required key is reported at the object that lacks it).
func (d *document) locate(ptr string) (line, col int) {
	for {
		if off, ok := d.offsets[ptr]; ok {
			return d.position(off)
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 0, 0
		}
		ptr = ptr[:i]
	}
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// pointer joins instance-location tokens into a JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}
