package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// cursorMark replaces every nextCursor in an answer. A cursor is bound to its store's instance
// and high-water mark, so two stores never mint the same one; that a cursor is present is
// compared, and chains of calls follow each store's own cursors.
const cursorMark = "(cursor)"

// answer is what an agent would see for one call, as a generic JSON value: the answer, or the
// error object for a tool error.
func answer(out any, err error) (any, error) {
	if err != nil {
		return errorAnswer(err), nil
	}
	b, mErr := json.Marshal(out)
	if mErr != nil {
		return nil, fmt.Errorf("marshal answer: %w", mErr)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // compare numbers exactly as written
	var v any
	if dErr := dec.Decode(&v); dErr != nil {
		return nil, fmt.Errorf("decode answer: %w", dErr)
	}
	return maskCursors(v), nil
}

func errorAnswer(err error) any {
	if te, ok := toolerr.As(err); ok {
		return map[string]any{"error": map[string]any{"code": string(te.Code), "message": te.Message, "hint": te.HintText()}}
	}
	if errors.Is(err, shape.ErrCursorInvalid) {
		return map[string]any{"error": map[string]any{"code": "cursor_invalid"}}
	}
	return map[string]any{"error": map[string]any{"go": err.Error()}}
}

func maskCursors(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if k == "nextCursor" {
				v[k] = cursorMark
				continue
			}
			v[k] = maskCursors(item)
		}
	case []any:
		for i, item := range v {
			v[i] = maskCursors(item)
		}
	}
	return v
}

// maxDiffLines bounds the report of one mismatching answer.
const maxDiffLines = 25

// diff lists, by JSON pointer, every place where got differs from want.
func diff(want, got any) []string {
	var out []string
	walkDiff("", want, got, &out)
	if len(out) > maxDiffLines {
		out = append(out[:maxDiffLines], fmt.Sprintf("… and %d more differences", len(out)-maxDiffLines))
	}
	return out
}

func walkDiff(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, seen := w[k]; !seen {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: missing, want %s", p, show(wv)))
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: unexpected %s", p, show(gv)))
			default:
				walkDiff(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(w) != len(g) {
			*out = append(*out, fmt.Sprintf("%s: %d items, want %d", path, len(g), len(w)))
		}
		for i := range min(len(w), len(g)) {
			walkDiff(fmt.Sprintf("%s/%d", path, i), w[i], g[i], out)
		}
		return
	default:
		if want == got {
			return
		}
	}
	*out = append(*out, fmt.Sprintf("%s: got %s, want %s", cmpPath(path), show(got), show(want)))
}

func cmpPath(p string) string {
	if p == "" {
		return "(answer)"
	}
	return p
}

// show renders a JSON value on one line, shortened.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const maxShown = 160
	if len(b) > maxShown {
		return string(b[:maxShown]) + "…"
	}
	return string(b)
}
