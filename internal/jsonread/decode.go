// Package jsonread reads JSON the way runlens's hot paths need it, without reflection: a whole
// value as the generated validators take it (Decode), and the members of a message's top-level
// object as raw values (Members). Each accepts exactly what encoding/json accepts and gives the
// same result; the fuzz tests beside them hold both to encoding/json.
package jsonread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is how deeply Decode lets arrays and objects nest: encoding/json's bound.
const MaxDepth = 10000

// Decode decodes exactly one JSON value, surrounded by nothing but JSON whitespace, the way the
// generated validators read an instance: objects as map[string]any (a repeated name keeps its
// last value), arrays as []any, numbers as json.Number (so bounds compare exactly), strings
// with invalid UTF-8 and unpaired surrogate escapes replaced by U+FFFD.
//
// It accepts what encoding/json's Decoder with UseNumber accepts, followed by the end of the
// input, and decodes it to the same value (FuzzDecodeAgreesWithEncodingJSON holds both); it
// reads the bytes once, without reflection, which every tool call does twice (its arguments and
// its answer).
func Decode(data []byte) (any, error) {
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}

// Members decodes a JSON object (surrounded by nothing but JSON whitespace) into its members'
// raw values, as json.Unmarshal into a map[string]json.RawMessage does: names unescaped like any
// string, a repeated name keeping its last value, each value its exact bytes (copied: the map
// does not share data's memory). It refuses what encoding/json refuses, nesting deeper than
// MaxDepth included.
func Members(data []byte) (map[string]json.RawMessage, error) {
	d := decoder{data: data}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return nil, d.errorf("want an object")
	}
	m := map[string]json.RawMessage{}
	var own []byte
	err := d.members(true, func(k string) error {
		start := d.i
		if err := d.skip(1); err != nil {
			return err
		}
		if own == nil {
			own = bytes.Clone(d.data)
		}
		m[k] = json.RawMessage(own[start:d.i:d.i])
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return m, nil
}

// members reads an object (d.data[d.i] is its '{'): for each member, its name (unescaped when
// keys is set, else only checked and ""), then member with d.i at the member's value, which
// member reads.
func (d *decoder) members(keys bool, member func(name string) error) error {
	if d.open('}') {
		return nil
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return d.errorf("want a string for an object key")
		}
		var k string
		var err error
		if keys {
			k, err = d.str()
		} else {
			err = d.skipString()
		}
		if err != nil {
			return err
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return d.errorf("want ':' after an object key")
		}
		d.i++
		d.space()
		if err := member(k); err != nil {
			return err
		}
		if done, err := d.next('}', "in an object"); done || err != nil {
			return err
		}
	}
}

// elements reads an array (d.data[d.i] is its '['), calling element with d.i at each value,
// which element reads.
func (d *decoder) elements(element func() error) error {
	if d.open(']') {
		return nil
	}
	for {
		if err := element(); err != nil {
			return err
		}
		if done, err := d.next(']', "in an array"); done || err != nil {
			return err
		}
	}
}

// open reads a container's opening bracket and the space after it, and the closing one when
// the container is empty (then it reports true).
func (d *decoder) open(end byte) (empty bool) {
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == end {
		d.i++
		return true
	}
	return false
}

// next reads what follows a container's member or element: end (done), or a comma and the
// space after it.
func (d *decoder) next(end byte, where string) (done bool, err error) {
	d.space()
	if d.i >= len(d.data) {
		return false, d.errorf("unexpected end of input %s", where)
	}
	switch d.data[d.i] {
	case end:
		d.i++
		return true, nil
	case ',':
		d.i++
		d.space()
		return false, nil
	default:
		return false, d.errorf("want ',' or %q %s", end, where)
	}
}

// skip reads one value without keeping it, checking it as value does; depth is the nesting of
// the value's container.
func (d *decoder) skip(depth int) error {
	if d.i >= len(d.data) {
		return d.errorf("unexpected end of input")
	}
	inner := func() error { return d.skip(depth + 1) }
	switch d.data[d.i] {
	case '{', '[':
		if depth+1 > MaxDepth {
			return d.errorf("exceeded max depth")
		}
		if d.data[d.i] == '[' {
			return d.elements(inner)
		}
		return d.members(false, func(string) error { return inner() })
	case '"':
		return d.skipString()
	default:
		_, err := d.value(depth)
		return err
	}
}

// skipString reads a string without decoding it, checking its escapes and characters as str
// does.
func (d *decoder) skipString() error {
	d.i++
	for d.i < len(d.data) {
		switch c := d.data[d.i]; {
		case c == '"':
			d.i++
			return nil
		case c < 0x20:
			return d.errorf("invalid control character in a string")
		case c == '\\':
			if _, err := d.escape(); err != nil {
				return err
			}
		default:
			d.i++
		}
	}
	return d.errorf("unexpected end of input in a string")
}

type decoder struct {
	data []byte
	i    int
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", d.i, fmt.Sprintf(format, args...))
}

func (d *decoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.i >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		return nil, d.errorf("invalid character %q looking for a value", c)
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return d.errorf("invalid literal, want %s", word)
	}
	d.i += len(word)
	return nil
}

func (d *decoder) object(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.errorf("exceeded max depth")
	}
	m := map[string]any{}
	err := d.members(true, func(k string) error {
		v, err := d.value(depth)
		m[k] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (d *decoder) array(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.errorf("exceeded max depth")
	}
	a := []any{}
	err := d.elements(func() error {
		v, err := d.value(depth)
		a = append(a, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// number reads a number as RFC 8259 spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() (any, error) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case digits() == 0:
		return nil, d.errorf("want a digit in a number")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, d.errorf("want a digit after the decimal point")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, d.errorf("want a digit in an exponent")
		}
	}
	return json.Number(d.data[start:d.i]), nil
}

// str reads a string (d.data[d.i] is its opening quote).
func (d *decoder) str() (string, error) {
	d.i++
	start := d.i
	// The common case: no escape, no control character, valid UTF-8: the bytes as they are.
	plain := true
	for ; d.i < len(d.data); d.i++ {
		c := d.data[d.i]
		if c == '"' {
			break
		}
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
		if c >= utf8.RuneSelf {
			plain = false
		}
	}
	if d.i >= len(d.data) {
		return "", d.errorf("unexpected end of input in a string")
	}
	if plain || d.data[d.i] == '"' && utf8.Valid(d.data[start:d.i]) {
		s := string(d.data[start:d.i])
		d.i++
		return s, nil
	}
	d.i = start
	var b []byte
	for {
		if d.i >= len(d.data) {
			return "", d.errorf("unexpected end of input in a string")
		}
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), nil
		case c < 0x20:
			return "", d.errorf("invalid control character in a string")
		case c == '\\':
			r, err := d.escape()
			if err != nil {
				return "", err
			}
			b = utf8.AppendRune(b, r)
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.data[d.i:])
			b = utf8.AppendRune(b, r)
			d.i += size
		}
	}
}

// escape reads one escape sequence (d.data[d.i] is its backslash) and returns the rune it
// stands for; a surrogate escape that does not pair with the next one is U+FFFD, as
// encoding/json decodes it.
func (d *decoder) escape() (rune, error) {
	if d.i+1 >= len(d.data) {
		return 0, d.errorf("unexpected end of input in an escape")
	}
	c := d.data[d.i+1]
	d.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := hex4(d.data[d.i:])
		if !ok {
			return 0, d.errorf("invalid \\u escape")
		}
		d.i += 4
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		if len(d.data) >= d.i+6 && d.data[d.i] == '\\' && d.data[d.i+1] == 'u' {
			if r2, ok := hex4(d.data[d.i+2:]); ok {
				if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
					d.i += 6
					return p, nil
				}
			}
		}
		return utf8.RuneError, nil
	default:
		return 0, d.errorf("invalid escape character %q", c)
	}
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
