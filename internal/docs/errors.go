package docs

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors a caller maps to stable error codes. The concrete errors carry the details an
// agent needs to correct itself; errors.Is matches them against these.
var (
	// ErrCorpusNotFound means the docs root does not exist or is not a readable directory.
	ErrCorpusNotFound = errors.New("docs corpus not found")
	// ErrDocNotFound means no indexed document answers to the slug, including every slug that
	// tries to leave the docs root.
	ErrDocNotFound = errors.New("doc not found")
	// ErrSectionNotFound means the document exists but has no such heading.
	ErrSectionNotFound = errors.New("section not found")
	// ErrRootOutside means the docs root, symbolic links resolved, is not inside the project:
	// a configuration error, not a missing corpus.
	ErrRootOutside = errors.New("docs root outside the project")
)

// maxListedSections bounds how many section slugs a SectionNotFoundError carries.
const maxListedSections = 30

// CorpusNotFoundError reports a missing docs root, named relative to the project root.
type CorpusNotFoundError struct {
	// Root is the docs root as configured, relative to the project root; never absolute.
	Root string
}

func (e *CorpusNotFoundError) Error() string {
	return fmt.Sprintf("docs corpus not found: %s is not a readable directory", e.Root)
}

// Is makes errors.Is(err, ErrCorpusNotFound) hold.
func (e *CorpusNotFoundError) Is(target error) bool { return target == ErrCorpusNotFound }

// RootOutsideError reports a docs root that resolves outside the project root.
type RootOutsideError struct {
	// Root is the docs root as configured, relative to the project root when inside it, else
	// its folder name; never absolute.
	Root string
}

func (e *RootOutsideError) Error() string {
	return fmt.Sprintf("the docs folder %s resolves outside the project root", e.Root)
}

// Is makes errors.Is(err, ErrRootOutside) hold.
func (e *RootOutsideError) Is(target error) bool { return target == ErrRootOutside }

// DocNotFoundError reports a slug with no document, with a few slugs that may have been meant.
type DocNotFoundError struct {
	// Slug is what the caller asked for.
	Slug string
	// Suggestions are up to three indexed slugs whose documents best match the words of Slug.
	Suggestions []string
}

func (e *DocNotFoundError) Error() string {
	return fmt.Sprintf("doc not found: %q", e.Slug)
}

// Is makes errors.Is(err, ErrDocNotFound) hold.
func (e *DocNotFoundError) Is(target error) bool { return target == ErrDocNotFound }

// SectionNotFoundError reports a section a document does not have, and the ones it does.
type SectionNotFoundError struct {
	// Slug is the document that was found.
	Slug string
	// Section is the heading text or slug that matched nothing.
	Section string
	// Available lists the document's section slugs in order, at most maxListedSections.
	Available []string
	// More counts the section slugs left out of Available.
	More int
}

func (e *SectionNotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "section not found: %q has no section %q", e.Slug, e.Section)
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, "; sections: %s", strings.Join(e.Available, ", "))
		if e.More > 0 {
			fmt.Fprintf(&b, " and %d more", e.More)
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrSectionNotFound) hold.
func (e *SectionNotFoundError) Is(target error) bool { return target == ErrSectionNotFound }
