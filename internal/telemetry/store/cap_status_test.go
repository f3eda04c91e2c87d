package store

import (
	"context"
	"strings"
	"testing"
)

// A domain's newest run is one seek into that domain's roots, whatever the other domains'
// roots in the bucket: walking every root of the bucket back from its end cost 55 ms for a rare
// domain among 128,000 roots.
func TestADomainsNewestRunIsASeekIntoThatDomainsRoots(t *testing.T) {
	s := openTestStore(t, Options{})
	for _, tc := range []struct{ name, service string }{
		{"without a service", ""},
		{"with a service", "checkout"},
		{"with the unknown service", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query, args := newestRunQuery("job", tc.service, 5_900_000)
			rows, err := s.readers.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			const want = "SEARCH otel_traces USING COVERING INDEX otel_traces_domain_runs (Domain=? AND Timestamp>? AND Timestamp<?)"
			if len(plan) != 1 || plan[0] != want {
				t.Errorf("plan:\n%s\nwant one step: %s", strings.Join(plan, "\n"), want)
			}
		})
	}
}
