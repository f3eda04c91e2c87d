package docs

import (
	"context"
	"sort"
	"strings"
)

// DocInfo is one document in a listing.
type DocInfo struct {
	Slug        string
	Title       string
	Description string
}

// ListResult is one page of the document listing.
type ListResult struct {
	Docs []DocInfo
	// Total is the number of documents whose slug has the prefix.
	Total int
	// Info describes the corpus; its fingerprint is the state the page was cut from.
	Info CorpusInfo
}

// List returns the page [offset, offset+limit) of the documents whose slug starts with prefix,
// sorted by slug.
func (c *Corpus) List(ctx context.Context, prefix string, limit, offset int) (ListResult, error) {
	if err := c.fresh(ctx); err != nil {
		return ListResult{Info: CorpusInfo{Root: c.display}}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	docs := c.idx.sorted
	from := sort.Search(len(docs), func(i int) bool { return docs[i].slug >= prefix })
	to := from + sort.Search(len(docs)-from, func(i int) bool { return !strings.HasPrefix(docs[from+i].slug, prefix) })
	res := ListResult{Total: to - from, Info: c.infoLocked()}
	for _, d := range page(docs[from:to], limit, offset) {
		res.Docs = append(res.Docs, DocInfo{Slug: d.slug, Title: d.title, Description: d.description})
	}
	return res, nil
}
