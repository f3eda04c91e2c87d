package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A node is one value of a parsed answer. Objects keep their member order so that an answer
// which Fit or the Redactor rewrites still reads in the order its schema declares.
type node struct {
	kind kind
	str  string   // kindString: the decoded value
	lit  []byte   // kindLiteral: number, true, false or null, as written
	keys []string // kindObject: member names, parallel to kids
	kids []*node  // kindArray: items; kindObject: member values
}

type kind uint8

const (
	kindLiteral kind = iota
	kindString
	kindArray
	kindObject
)

// errNotJSON marks input that is not one well-formed JSON value.
var errNotJSON = errors.New("not a JSON value")

// parseJSON parses one JSON value. It checks well-formedness with encoding/json first (which
// also bounds the nesting depth), so the recursive descent below never meets hostile input.
func parseJSON(raw []byte) (*node, error) {
	if !json.Valid(raw) {
		return nil, errNotJSON
	}
	p := parser{b: raw}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("%w: trailing data at offset %d", errNotJSON, p.i)
	}
	return n, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (*node, error) {
	p.space()
	if p.i >= len(p.b) {
		return nil, fmt.Errorf("%w: unexpected end", errNotJSON)
	}
	switch p.b[p.i] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &node{kind: kindString, str: s}, nil
	default:
		start := p.i
		for p.i < len(p.b) && !isDelimiter(p.b[p.i]) {
			p.i++
		}
		if start == p.i {
			return nil, fmt.Errorf("%w: unexpected %q at offset %d", errNotJSON, p.b[p.i], p.i)
		}
		return &node{kind: kindLiteral, lit: p.b[start:p.i]}, nil
	}
}

func isDelimiter(b byte) bool {
	switch b {
	case ',', ']', '}', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func (p *parser) object() (*node, error) {
	n := &node{kind: kindObject}
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return n, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, fmt.Errorf("%w: object key expected at offset %d", errNotJSON, p.i)
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, fmt.Errorf("%w: colon expected at offset %d", errNotJSON, p.i)
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, k)
		n.kids = append(n.kids, v)
		if done, err := p.next('}'); err != nil || done {
			return n, err
		}
	}
}

func (p *parser) array() (*node, error) {
	n := &node{kind: kindArray}
	p.i++ // [
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return n, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, v)
		if done, err := p.next(']'); err != nil || done {
			return n, err
		}
	}
}

// next consumes the separator after a member or item and reports whether the container closed.
func (p *parser) next(closer byte) (bool, error) {
	p.space()
	if p.i >= len(p.b) {
		return false, fmt.Errorf("%w: unexpected end", errNotJSON)
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, nil
	case closer:
		p.i++
		return true, nil
	}
	return false, fmt.Errorf("%w: unexpected %q at offset %d", errNotJSON, p.b[p.i], p.i)
}

// string decodes the string literal at p.i. Literals without escapes (nearly all of them) are
// copied directly; the rest go through encoding/json, the reference for JSON string semantics.
func (p *parser) string() (string, error) {
	start := p.i
	p.i++ // opening quote
	escaped := false
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			p.i++
			lit := p.b[start:p.i]
			body := lit[1 : len(lit)-1]
			if !escaped && utf8.Valid(body) {
				return string(body), nil
			}
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				return "", fmt.Errorf("%w: string at offset %d: %w", errNotJSON, start, err)
			}
			return s, nil
		}
		p.i++
	}
	return "", fmt.Errorf("%w: unterminated string at offset %d", errNotJSON, start)
}

// encode writes n compactly, with strings quoted as encoding/json quotes them.
func (n *node) encode(dst []byte) []byte {
	switch n.kind {
	case kindString:
		return appendQuoted(dst, n.str)
	case kindArray:
		dst = append(dst, '[')
		for i, k := range n.kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = k.encode(dst)
		}
		return append(dst, ']')
	case kindObject:
		dst = append(dst, '{')
		for i, k := range n.kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, n.keys[i])
			dst = append(dst, ':')
			dst = k.encode(dst)
		}
		return append(dst, '}')
	default:
		return append(dst, n.lit...)
	}
}

// size is len(n.encode(nil)) without building it.
func (n *node) size() int {
	switch n.kind {
	case kindString:
		return quotedLen(n.str)
	case kindArray:
		s := 2 + max(len(n.kids)-1, 0)
		for _, k := range n.kids {
			s += k.size()
		}
		return s
	case kindObject:
		s := 2 + max(len(n.kids)-1, 0)
		for i, k := range n.kids {
			s += quotedLen(n.keys[i]) + 1 + k.size()
		}
		return s
	default:
		return len(n.lit)
	}
}

// member returns the value of the object member named key, or nil.
func (n *node) member(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.kids[i]
		}
	}
	return nil
}

// set replaces the value of member key, appending the member when it is missing.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.kids[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.kids = append(n.kids, v)
}

// remove deletes member key if present.
func (n *node) remove(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.kids = append(n.kids[:i], n.kids[i+1:]...)
			return
		}
	}
}

func intNode(v int) *node { return &node{kind: kindLiteral, lit: strconv.AppendInt(nil, int64(v), 10)} }

func boolNode(v bool) *node { return &node{kind: kindLiteral, lit: strconv.AppendBool(nil, v)} }

func stringNode(s string) *node { return &node{kind: kindString, str: s} }

// intValue reads an integer literal.
func (n *node) intValue() (int, bool) {
	if n == nil || n.kind != kindLiteral || bytes.ContainsAny(n.lit, ".eE") {
		return 0, false
	}
	v, err := strconv.Atoi(string(n.lit))
	return v, err == nil
}
