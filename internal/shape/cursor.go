package shape

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"sync"
)

// ErrCursorInvalid is the sentinel of every cursor that must not be honoured; the glue maps it to
// the error code of the same name with CursorHint. The concrete error is a *CursorError.
var ErrCursorInvalid = errors.New("cursor_invalid")

// CursorHint is the advice that goes with ErrCursorInvalid.
const CursorHint = "re-run the query without a cursor to start again from the first page"

// CursorReason says why a cursor was refused; every reason fails closed the same way, and the
// message tells the model which of its mistakes (if any) to correct.
type CursorReason string

// The reasons Decode refuses a cursor.
const (
	CursorMalformed    CursorReason = "malformed"
	CursorOtherVersion CursorReason = "issued by another version of runlens"
	CursorOtherKey     CursorReason = "issued with another cursor key"
	CursorForged       CursorReason = "tampered with"
	CursorWrongTool    CursorReason = "issued by another tool"
	CursorQueryChanged CursorReason = "issued for different arguments"
	CursorDataChanged  CursorReason = "the data changed since it was issued"
)

// cursorMessages are the client-facing sentences, one per reason, so a refusal says why.
var cursorMessages = map[CursorReason]string{
	CursorMalformed:    "this is not a cursor runlens issued; pass page.nextCursor exactly as it was returned",
	CursorOtherVersion: "this cursor was issued by another version of runlens; re-run the query without a cursor",
	CursorOtherKey:     "this cursor was issued with another cursor key — by another project or after the key file was removed; re-run the query without a cursor",
	CursorForged:       "this cursor was altered after it was issued; pass page.nextCursor exactly as it was returned",
	CursorWrongTool:    "this cursor was issued by another tool; pass it only to the tool that returned it",
	CursorQueryChanged: "this cursor was issued for different arguments; repeat the call that returned it with only cursor changed, or re-run the query without a cursor",
	CursorDataChanged:  "the data changed since this cursor was issued, so its page would no longer follow the previous one; re-run the query without a cursor",
}

// CursorError is a refused cursor with its reason.
type CursorError struct{ Reason CursorReason }

// Error names the sentinel first so logs and messages group by it.
func (e *CursorError) Error() string { return fmt.Sprintf("%s: cursor %s", ErrCursorInvalid, e.Reason) }

// Is makes errors.Is(err, ErrCursorInvalid) hold.
func (e *CursorError) Is(target error) bool { return target == ErrCursorInvalid }

// Message is the sentence a client sees for this refusal.
func (e *CursorError) Message() string {
	if m, ok := cursorMessages[e.Reason]; ok {
		return m
	}
	return "the cursor is not valid for this query"
}

// A cursor is base64url of: version, the key id, three keyed tags (tool, query, data), the
// offset as a uvarint, and a truncated HMAC of all of it. The key id and the tags only name the
// reason of a refusal; the MAC is what makes a cursor unforgeable, and 64-bit keyed tags make an
// accidental match of a different query or snapshot negligible.
const (
	cursorVersion = 2
	keyIDLen      = 4
	tagLen        = 8
	macLen        = 16
	headerLen     = 1 + keyIDLen + 3*tagLen
	maxOffset     = math.MaxInt32
)

// Codec mints and checks the cursors of every tool with one key, so a cursor cannot be edited to
// read outside the query it came from. With the key kept in the project (NewFileCodec) a cursor
// survives a restart of the server while its data fingerprint holds.
type Codec struct {
	load  func() []byte
	once  sync.Once
	key   []byte
	keyID [keyIDLen]byte
}

// NewCodec returns a codec keyed with key, or with 32 random bytes when key is nil (cursors then
// live as long as the process: tests, and the fallback of a project that cannot keep a key).
func NewCodec(key []byte) *Codec {
	if key == nil {
		key = randomKey()
	}
	key = bytes.Clone(key)
	return &Codec{load: func() []byte { return key }}
}

// randomKey returns a fresh cursor key.
func randomKey() []byte {
	key := make([]byte, cursorKeyLen)
	_, _ = rand.Read(key) // crypto/rand.Read never fails on supported platforms.
	return key
}

// ready loads the key on first use, so a server that never pages never touches the key file.
func (c *Codec) ready() {
	c.once.Do(func() {
		c.key = c.load()
		c.keyID = cursorKeyID(c.key)
	})
}

// cursorKeyID names a key without revealing it: the first bytes of a domain-separated SHA-256.
func cursorKeyID(key []byte) [keyIDLen]byte {
	sum := sha256.Sum256(append([]byte("runlens cursor key id\x00"), key...))
	return [keyIDLen]byte(sum[:keyIDLen])
}

// Encode binds a cursor to the tool, the normalized query (any JSON-marshalable value; a
// top-level "cursor" member is ignored, other paging fields the caller removes), the data
// fingerprint and the offset of the next page.
func (c *Codec) Encode(tool string, query any, fingerprint string, offset int) (string, error) {
	if offset < 0 || offset > maxOffset {
		return "", fmt.Errorf("encode cursor: offset %d out of range", offset)
	}
	q, err := normalizeQuery(query)
	if err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	c.ready()
	m := c.newMAC()
	b := make([]byte, 0, headerLen+binary.MaxVarintLen32+macLen)
	b = append(b, cursorVersion)
	b = append(b, c.keyID[:]...)
	b = m.append(b, "tool", []byte(tool), tagLen)
	b = m.append(b, "query", q, tagLen)
	b = m.append(b, "data", []byte(fingerprint), tagLen)
	b = binary.AppendUvarint(b, uint64(offset))
	b = m.append(b, "cursor", b, macLen)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Decode returns the offset a cursor points at, or a *CursorError (errors.Is ErrCursorInvalid)
// when it is malformed, of another version or key, forged, or was issued for another tool,
// query or data snapshot.
func (c *Codec) Decode(cursor, tool string, query any, fingerprint string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 {
		return 0, &CursorError{Reason: CursorMalformed}
	}
	if b[0] != cursorVersion {
		// Version 1 had no key id and a per-process key; any other first byte is not ours.
		if b[0] == 1 && len(b) >= 1+3*tagLen+1+macLen {
			return 0, &CursorError{Reason: CursorOtherVersion}
		}
		return 0, &CursorError{Reason: CursorMalformed}
	}
	if len(b) < headerLen+1+macLen || len(b) > headerLen+binary.MaxVarintLen32+macLen {
		return 0, &CursorError{Reason: CursorMalformed}
	}
	body, sum := b[:len(b)-macLen], b[len(b)-macLen:]
	off, n := binary.Uvarint(body[headerLen:])
	if n <= 0 || headerLen+n != len(body) || off > maxOffset {
		return 0, &CursorError{Reason: CursorMalformed}
	}
	c.ready()
	if !bytes.Equal(body[1:1+keyIDLen], c.keyID[:]) {
		return 0, &CursorError{Reason: CursorOtherKey}
	}
	m := c.newMAC()
	if !hmac.Equal(sum, m.append(nil, "cursor", body, macLen)) {
		return 0, &CursorError{Reason: CursorForged}
	}
	tags := body[1+keyIDLen:]
	if !hmac.Equal(tags[:tagLen], m.append(nil, "tool", []byte(tool), tagLen)) {
		return 0, &CursorError{Reason: CursorWrongTool}
	}
	q, err := normalizeQuery(query)
	if err != nil {
		return 0, fmt.Errorf("decode cursor: %w", err)
	}
	if !hmac.Equal(tags[tagLen:2*tagLen], m.append(nil, "query", q, tagLen)) {
		return 0, &CursorError{Reason: CursorQueryChanged}
	}
	if !hmac.Equal(tags[2*tagLen:3*tagLen], m.append(nil, "data", []byte(fingerprint), tagLen)) {
		return 0, &CursorError{Reason: CursorDataChanged}
	}
	return int(off), nil
}

// cursorMAC computes the keyed, domain-separated digests of one Encode or Decode call with one
// HMAC state.
type cursorMAC struct {
	h   hash.Hash
	sum []byte
}

func (c *Codec) newMAC() *cursorMAC {
	return &cursorMAC{h: hmac.New(sha256.New, c.key), sum: make([]byte, 0, sha256.Size)}
}

// append appends the first n bytes of the digest of v in domain to dst.
func (m *cursorMAC) append(dst []byte, domain string, v []byte, n int) []byte {
	m.h.Reset()
	m.h.Write([]byte(domain))
	m.h.Write([]byte{0})
	m.h.Write(v)
	m.sum = m.h.Sum(m.sum[:0])
	return append(dst, m.sum[:n]...)
}

// normalizeQuery renders a query so equal queries give equal bytes however they were built:
// members sorted, null members dropped (an absent optional argument and an explicit null mean
// the same), numbers kept as written, a top-level "cursor" removed.
func normalizeQuery(query any) ([]byte, error) {
	raw, err := json.Marshal(query)
	if err != nil {
		return nil, fmt.Errorf("normalize query: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("normalize query: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "cursor")
	}
	out, err := json.Marshal(dropNulls(v))
	if err != nil {
		return nil, fmt.Errorf("normalize query: %w", err)
	}
	return out, nil
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}
