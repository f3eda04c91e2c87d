package shape

import (
	"errors"
	"fmt"
)

// Limits are the byte bounds of one call. The glue picks them per tool and detail level
// (DefaultLimits gives the contract's defaults; configuration may change them).
type Limits struct {
	// Budget is the ceiling, in bytes, of the serialized answer at detail=summary or
	// detail=standard; zero means the contract default for the detail level.
	Budget int
	// FullCeiling is the hard ceiling of a detail=full answer; zero means DefaultFullCeiling.
	FullCeiling int
	// TailKeys names members whose string values lose their beginning rather than their end
	// when shortened, because their newest part is the point (command output).
	TailKeys []string
	// Keep names further members whose string values are never shortened, beyond the built-in
	// identifiers (see protectedKey): enum or pattern-constrained members of a tool's schema.
	Keep []string
}

// Paging tells Fit which collection the answer's `page` object describes, so that dropping
// items from it keeps `page` honest.
type Paging struct {
	// Field is the top-level array the `page` object describes ("runs", "spans", ...). When
	// Paging is nil and the answer has a `page` and exactly one top-level array, that array is it.
	Field string
	// Remint returns the cursor of the page that starts right after the first `returned` items
	// of this one; it is called when Fit dropped items of Field, because the old nextCursor
	// would skip them. Nil means the answer loses its nextCursor instead: never a wrong one.
	Remint func(returned int) (string, error)
	// Count names a top-level integer member that equals the number of items of Field
	// ("count" in list answers); Fit keeps it in step. Empty: there is none.
	Count string
	// Omitted names a top-level integer member counting items of Field left out of the answer
	// ("omittedSpans"); Fit adds the items it drops. Empty: there is none.
	Omitted string
}

// ErrTooLarge is the sentinel of every answer that cannot be sent within its bounds; the glue
// maps it to the error code of the same name. The concrete error is a *TooLargeError.
var ErrTooLarge = errors.New("output_too_large")

// TooLargeError says how large the answer was, what bound it broke, and what to do instead.
type TooLargeError struct {
	Detail Detail // the detail level whose bound was broken
	Size   int    // bytes of the answer (after every reduction Fit could make)
	Limit  int    // the bound, in bytes
}

// Error reads as a message a model can act on.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the answer is %d bytes, above the %d-byte bound of detail=%s; %s",
		ErrTooLarge, e.Size, e.Limit, e.Detail, e.Hint())
}

// Hint is the advice part of the message, for the hint field of a tool error.
func (e *TooLargeError) Hint() string {
	const narrow = "narrow the query (a shorter window, a lower limit, a filter)"
	switch e.Detail {
	case Full:
		return narrow + " or ask for detail=standard"
	case Standard:
		return narrow + " or ask for detail=summary"
	}
	return narrow
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Fit makes raw, a JSON object, fit the byte budget of detail d. It first drops whole items
// from the end of the top-level collections (the largest first, as long as it is larger than any
// string that would stay), then shortens the longest strings (UTF-8 safe, marked with Ellipsis;
// prose before single words, which are more likely identifiers or enum values), then drops
// more top-level items, and as a last resort drops items from the end of nested collections.
// Identifiers, enums, lim.Keep and the `page`/`scan` objects are never shortened (see
// protectedKey), and strings keep at least 16 bytes, so schema bounds keep holding.
//
// When it changed anything it keeps `page` honest: `returned` equals the length of
// paging.Field, `truncated` is true (as is a top-level boolean `truncated`), and `nextCursor` is
// re-minted through paging.Remint when items of Field were dropped. It never creates `page`.
//
// For detail=full it only checks lim.FullCeiling. An answer that cannot be brought within its
// bound yields a *TooLargeError. Fit returns the answer to send and whether it changed it; an
// answer within budget is returned as is.
func Fit(raw []byte, d Detail, lim Limits, paging *Paging) ([]byte, bool, error) {
	if d == Full {
		ceiling := lim.FullCeiling
		if ceiling <= 0 {
			ceiling = DefaultFullCeiling
		}
		if len(raw) > ceiling {
			return nil, false, &TooLargeError{Detail: d, Size: len(raw), Limit: ceiling}
		}
		return raw, false, nil
	}
	if d == "" {
		d = Standard
	}
	budget := lim.Budget
	if budget <= 0 {
		budget = DefaultLimits(d, false).Budget
	}
	if len(raw) <= budget {
		return raw, false, nil
	}
	root, err := parseJSON(raw)
	if err != nil {
		return nil, false, fmt.Errorf("fit answer: %w", err)
	}
	if root.kind != kindObject {
		return nil, false, fmt.Errorf("fit answer: %w: the answer is not an object", errNotJSON)
	}
	f := newFitter(root, d, budget, lim, paging)
	if err := f.run(); err != nil {
		return nil, false, err
	}
	out := root.encode(make([]byte, 0, budget))
	if len(out) > budget {
		return nil, false, &TooLargeError{Detail: d, Size: len(out), Limit: budget}
	}
	return out, f.changed, nil
}
