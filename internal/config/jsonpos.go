package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// document is a parsed configuration file that remembers where each key sits, so every problem
// can be reported at a line and column, not only as a JSON pointer.
type document struct {
	data    []byte
	value   any              // the decoded value, numbers as json.Number (what the validator wants)
	offsets map[string]int64 // JSON pointer → byte offset of its key (or of the value in arrays)
	dups    []dupKey         // keys that appear twice in one object
}

// dupKey is the second occurrence of a key in one object.
type dupKey struct {
	ptr    string
	offset int64
}

// syntaxError is invalid JSON at a byte offset.
type syntaxError struct {
	offset int64
	msg    string
}

func (e *syntaxError) Error() string { return e.msg }

// parseDocument decodes data in one pass, recording key offsets and duplicate keys. It rejects
// anything after the top-level value.
func parseDocument(data []byte) (*document, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
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
			child := ptr + "/" + escapePointer(key)
			if _, seen := obj[key]; seen {
				w.doc.dups = append(w.doc.dups, dupKey{ptr: child, offset: off})
			} else {
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
			v, err := w.value(ptr + "/" + strconv.Itoa(i))
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

// position converts a byte offset into a 1-based line and a 1-based column counted in
// characters, as editors show them.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// locate finds the line and column of a pointer, or of its nearest ancestor present in the file
// (a missing required key is reported at the object that lacks it).
func (d *document) locate(ptr string) (line, col int) {
	for {
		if off, ok := d.offsets[ptr]; ok {
			return position(d.data, off)
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
