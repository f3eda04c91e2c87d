package clickhouse

import (
	"cmp"
	"context"
	"strconv"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

var (
	_ telemetry.RunLister           = (*Backend)(nil)
	_ telemetry.ActivityCounter     = (*Backend)(nil)
	_ telemetry.FailingTraceScanner = (*Backend)(nil)
)

// runsSubquery writes a subquery of the window's runs — one row per root span (one copy per
// trace and span id) — with telemetry.RunFromRoot's fields computed by ClickHouse: id, domain,
// name, outcome, normalized status, start, duration, service, trace and error count (the
// trace's error spans, one copy per span id, whenever they started — read within errWithin,
// the time the window's traces span (the zero window: the whole table); GLOBAL so a
// Distributed table joins once).
//
// With o.page set, only the roots of those traces are read, and the join counts every span and
// error span of each of them across the table (a column spans besides errors): the traces are
// few, so the trace-id bloom filter finds them without a read of the window. With o.copies,
// copies of a root are not dropped: for a caller that knows there are none.
func (b *Backend) runsSubquery(q *sqlText, conv *conventions.Conventions, w telemetry.Window, svc string, errWithin telemetry.Window, o runsOf) {
	page := o.page
	const a = "SpanAttributes"
	jobID := first(q, a, conv.JobKeys.IDKeys)
	word := first(q, a, conv.JobKeys.StatusKeys)
	jobName := first(q, a, conv.JobKeys.NameKeys)
	outcome := first(q, a, conv.JobKeys.OutcomeKeys)
	exec := executionIDExpr(q, conv, a)
	q.w("(SELECT if(", exec, " != '', ", exec, ", r.TraceId) AS id, ", domainExpr(q, conv, a), " AS domain, ",
		"if(", jobID, " != '' AND ", jobName, " != '', ", jobName, ", SpanName) AS name, ",
		"if(", jobID, " != '', if(", trimmed(word), " != '', ", trimmed(word), ", ", trimmed(outcome), "), if(", word, " != '', ", word, ", ", outcome, ")) AS outcome, ",
		normalizeStatusExpr(q, conv, word, spanFailedExpr(q, a), "if("+jobID+" != '', "+exitCodeExpr(q, conv, a)+", NULL)"), " AS status, ",
		"intDiv(toUnixTimestamp64Nano(Timestamp), 1000000) AS ms, toUInt64(Duration) AS dur, ServiceName AS service, r.TraceId AS trace, ")
	if o.noErrors {
		q.w("toUInt64(0) AS errors")
	} else {
		q.w("errors")
	}
	if o.copies {
		q.w(", cityHash64(r.SpanId) AS spanHash")
	}
	var traces string
	if page != nil {
		traces = q.strs(page)
		q.w(", spans")
	}
	q.w(
		// Only the columns the expressions read go through LIMIT BY (SELECT * would carry every
		// column of every root through the deduplication).
		" FROM (SELECT TraceId, SpanId, SpanName, SpanKind, StatusCode, Timestamp, Duration, ServiceName, SpanAttributes FROM ", b.traces, " WHERE ")
	window(q, "Timestamp", w)
	q.w(" AND ParentSpanId = ''")
	if svc != "" {
		service(q, svc)
	}
	if page != nil {
		q.w(" AND TraceId IN ", traces, " LIMIT 1 BY TraceId, SpanId) AS r GLOBAL LEFT JOIN (SELECT TraceId, ",
			"toUInt64(uniqExactIf(SpanId, StatusCode = 'Error')) AS errors, toUInt64(uniqExact(SpanId)) AS spans FROM ", b.traces,
			" WHERE TraceId IN ", traces, " GROUP BY TraceId) AS e ON e.TraceId = r.TraceId)")
		return
	}
	// The error spans per trace, of every trace in the time the window's traces span: far
	// fewer than the window's roots, so the join's table is small, and no set of the window's
	// trace ids is built to narrow it (a LEFT JOIN keeps only the roots' traces anyway).
	if !o.copies {
		q.w(" LIMIT 1 BY TraceId, SpanId")
	}
	if o.noErrors {
		q.w(") AS r)")
		return
	}
	q.w(") AS r GLOBAL LEFT JOIN (SELECT TraceId, toUInt64(uniqExact(SpanId)) AS errors FROM ", b.traces,
		" WHERE StatusCode = 'Error' AND ")
	window(q, "Timestamp", errWithin)
	if svc != "" {
		// One service's roots are few: only their traces' error spans are grouped (the join
		// keeps no other).
		q.w(" AND TraceId GLOBAL IN (SELECT TraceId FROM ", b.traces, " WHERE ")
		window(q, "Timestamp", w)
		q.w(" AND ParentSpanId = ''")
		service(q, svc)
		q.w(")")
	}
	q.w(" GROUP BY TraceId) AS e ON e.TraceId = r.TraceId)")
}

// runsOf narrows runsSubquery.
type runsOf struct {
	page   []string
	copies bool
	// noErrors leaves the error spans uncounted (errors is 0): for a caller that reads only
	// the runs' own fields, such as their verdicts (R5), which saves the join of a day's error
	// spans.
	noErrors bool
}

// rootsSpan is the time the traces of the window's runs (of service svc, when set) span, as
// tracesSpan reads it: where their error spans are counted.
func (b *Backend) rootsSpan(ctx context.Context, w telemetry.Window, svc string, at tableExtents) (telemetry.Window, error) {
	return b.tracesSpan(ctx, w, b.rootsOf(w, svc), at.spans, at.known)
}

// rootsOf writes the subquery of the traces of the window's runs (of service svc, when set).
func (b *Backend) rootsOf(w telemetry.Window, svc string) func(*sqlText) {
	return func(q *sqlText) {
		q.w("(SELECT TraceId FROM ", b.traces, " WHERE ")
		window(q, "Timestamp", w)
		q.w(" AND ParentSpanId = ''")
		if svc != "" {
			service(q, svc)
		}
		q.w(")")
	}
}

// filteredRuns writes the window's runs of q's service, narrowed to q's domain and status:
// the FROM of both the page and, past its end, the count.
func (b *Backend) filteredRuns(s *sqlText, conv *conventions.Conventions, q telemetry.RunsQuery, errWithin telemetry.Window) {
	b.runsSubquery(s, conv, q.Window, q.Service, errWithin, runsOf{})
	s.w(" WHERE 1")
	if q.Domain != "" {
		s.w(" AND domain = ", s.str(q.Domain))
	}
	if q.Status != "" {
		s.w(" AND status = ", s.str(q.Status))
	}
}

// ListRuns implements telemetry.RunLister: the page, its total and every field but the span
// count in one query; the page's span counts in a second.
func (b *Backend) ListRuns(ctx context.Context, q telemetry.RunsQuery, ask telemetry.Ask) (telemetry.RunPage, bool, error) {
	conv := ask.Conv
	if err := b.ready(ctx); err != nil {
		return telemetry.RunPage{}, false, err
	}
	page := telemetry.RunPage{Scan: telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs}}
	if q.Domain == "" && q.Status == "" {
		p, ok, err := b.newestRuns(ctx, q, conv, page)
		if err != nil || ok {
			return p, true, err
		}
	}
	at, err := b.extents(ctx)
	if err != nil {
		return telemetry.RunPage{}, false, err
	}
	errWithin, err := b.rootsSpan(ctx, q.Window, q.Service, at)
	if err != nil {
		return telemetry.RunPage{}, false, err
	}
	s := &sqlText{}
	s.w("SELECT id, domain, name, outcome, status, ms, dur, service, trace, errors, count() OVER () FROM ")
	b.filteredRuns(s, conv, q, errWithin)
	limit := cmp.Or(q.Limit, telemetry.DefaultRunsLimit)
	s.w(" ORDER BY ms DESC, trace ASC, id ASC LIMIT ", strconv.Itoa(limit), " OFFSET ", strconv.Itoa(max(q.Offset, 0)))
	var total uint64
	limited, err := b.r.query(ctx, s, limit, func(rows driver.Rows) error {
		var r telemetry.RunSummary
		var dur, errs uint64
		if err := rows.Scan(&r.ID, &r.Domain, &r.Name, &r.Outcome, &r.Status, &r.StartMs, &dur, &r.Service, &r.TraceID, &errs, &total); err != nil {
			return err
		}
		r.DurationMs, r.HasDuration = telemetry.Ms(int64(min(dur, 1<<63-1))), true
		r.Service, r.ErrorCount = telemetry.ServiceOf(r.Service), int64(errs)
		page.Runs = append(page.Runs, r)
		return nil
	})
	if err != nil {
		return telemetry.RunPage{}, false, err
	}
	page.Total, page.Scan.Limited, page.Scan.Scanned = int(total), limited, int64(total)
	if len(page.Runs) == 0 {
		if q.Offset > 0 && !limited { // past the end: the total is still wanted
			c := &sqlText{}
			c.w("SELECT count() FROM ")
			b.filteredRuns(c, conv, q, errWithin)
			n, err := b.count(ctx, c)
			if err != nil {
				return telemetry.RunPage{}, false, err
			}
			page.Total, page.Scan.Limited = int(max(n, 0)), n < 0
		}
		return page, true, nil
	}
	traces := make([]string, len(page.Runs))
	for i, r := range page.Runs {
		traces[i] = r.TraceID
	}
	c := &sqlText{}
	c.w("SELECT TraceId, toInt64(uniqExact(SpanId)) FROM ", b.traces, " WHERE TraceId IN ", c.strs(traces), " GROUP BY TraceId")
	counts := map[string]int64{}
	lim, err := b.r.query(ctx, c, len(traces), func(rows driver.Rows) error {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return err
		}
		counts[t] = n
		return nil
	})
	if err != nil {
		return telemetry.RunPage{}, false, err
	}
	page.Scan.Limited = page.Scan.Limited || lim
	for i := range page.Runs {
		page.Runs[i].SpanCount = counts[page.Runs[i].TraceID]
	}
	return page, true, nil
}

// maxLazyRuns bounds the page end (offset + limit) newestRuns answers: past it the candidates
// it reads first are no longer few.
const maxLazyRuns = 1000

// newestRuns answers a page of runs filtered by nothing but the service without computing the
// fields of every run of the window (its ids, domains and statuses read the roots'
// attributes, and the copies of roots are dropped by a single-threaded LIMIT BY: 1.5–1.9 s
// over a day of 10 M spans). The first query reads only the roots' start, span id and trace
// id: the total — the roots counted, and checked to hold no copies (counted once per span
// id, a root of each trace and span id is counted once: as many as the rows only when no
// root came twice) — and the candidates, every root in the millisecond the page's last row
// can start or later: the start of the page end's newest root floored to the millisecond
// (a top-N of one numeric column) bounds them. Every run the page can hold is among them,
// unless copies of roots took their places (then ok is false, as when the check finds
// copies, and the caller computes the page as for a filter). The second computes the page's
// runs from those traces alone, with their span and error counts. A run beyond the
// candidates starts in an earlier millisecond than all of them, so it cannot reach the page.
func (b *Backend) newestRuns(ctx context.Context, q telemetry.RunsQuery, conv *conventions.Conventions, page telemetry.RunPage) (telemetry.RunPage, bool, error) {
	limit := cmp.Or(q.Limit, telemetry.DefaultRunsLimit)
	offset := max(q.Offset, 0)
	end := offset + limit
	if end > maxLazyRuns {
		return page, false, nil
	}
	roots := func(c *sqlText) {
		c.w(" FROM ", b.traces, " WHERE ")
		window(c, "Timestamp", q.Window)
		c.w(" AND ParentSpanId = ''")
		if q.Service != "" {
			service(c, q.Service)
		}
	}
	c := &sqlText{}
	c.w("WITH (SELECT tuple(toUInt64(count()), toUInt64(uniqExact(cityHash64(SpanId))))")
	roots(c)
	c.w(") AS n SELECT TraceId, SpanId, n.1, n.2")
	roots(c)
	c.w(" AND Timestamp >= (SELECT fromUnixTimestamp64Milli(toUnixTimestamp64Milli(min(ts))) FROM (SELECT Timestamp AS ts")
	roots(c)
	c.w(" ORDER BY Timestamp DESC LIMIT ", strconv.Itoa(end), "))")
	type key struct{ trace, span string }
	seen, ofTrace := map[key]bool{}, map[string]bool{}
	var traces []string
	var total, once uint64
	limited, err := b.r.query(ctx, c, 4*maxLazyRuns, func(rows driver.Rows) error {
		var k key
		if err := rows.Scan(&k.trace, &k.span, &total, &once); err != nil {
			return err
		}
		if !seen[k] {
			seen[k] = true
			if !ofTrace[k.trace] {
				ofTrace[k.trace] = true
				traces = append(traces, k.trace)
			}
		}
		return nil
	})
	if err != nil || limited || once != total || uint64(len(seen)) < min(uint64(end), total) {
		return page, false, err
	}
	page.Total, page.Scan.Scanned = int(min(total, 1<<62)), int64(min(total, 1<<62))
	if offset >= len(seen) {
		return page, true, nil
	}
	s := &sqlText{}
	s.w("SELECT id, domain, name, outcome, status, ms, dur, service, trace, errors, spans FROM ")
	b.runsSubquery(s, conv, q.Window, q.Service, telemetry.Window{}, runsOf{page: traces})
	s.w(" ORDER BY ms DESC, trace ASC, id ASC LIMIT ", strconv.Itoa(limit), " OFFSET ", strconv.Itoa(offset))
	limited, err = b.r.query(ctx, s, limit, func(rows driver.Rows) error {
		var r telemetry.RunSummary
		var dur, errs, spans uint64
		if err := rows.Scan(&r.ID, &r.Domain, &r.Name, &r.Outcome, &r.Status, &r.StartMs, &dur, &r.Service, &r.TraceID, &errs, &spans); err != nil {
			return err
		}
		r.DurationMs, r.HasDuration = telemetry.Ms(int64(min(dur, 1<<63-1))), true
		r.Service, r.ErrorCount, r.SpanCount = telemetry.ServiceOf(r.Service), int64(errs), int64(min(spans, 1<<62))
		page.Runs = append(page.Runs, r)
		return nil
	})
	if err != nil {
		return telemetry.RunPage{}, false, err
	}
	page.Scan.Limited = limited
	return page, true, nil
}

// CountActivity implements telemetry.ActivityCounter: spans and records per service, and runs
// per domain, counted by ClickHouse.
func (b *Backend) CountActivity(ctx context.Context, q telemetry.StatusQuery, ask telemetry.Ask) (telemetry.Activity, bool, error) {
	conv := ask.Conv
	if err := b.ready(ctx); err != nil {
		return telemetry.Activity{}, false, err
	}
	act := telemetry.Activity{Services: telemetry.ServiceTallies{}, Domains: map[string]telemetry.DomainActivity{},
		Scan: telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs}}
	// Two independent parts, at once: spans and records per service (one query over both
	// tables) and runs per domain.
	var countsLimited, domainsLimited bool
	var domains []telemetry.DomainActivity
	counts := &sqlText{}
	counts.w("SELECT isSpans, ServiceName, toInt64(count()), toInt64(max(intDiv(toUnixTimestamp64Nano(Timestamp), 1000000))) FROM (")
	for i, table := range []string{b.traces, b.logs} {
		if i > 0 {
			counts.w(" UNION ALL ")
		}
		counts.w("SELECT ", strconv.Itoa(1-i), " AS isSpans, ServiceName, Timestamp FROM ", table, " WHERE ")
		window(counts, "Timestamp", q.Window)
		if q.Service != "" {
			service(counts, q.Service)
		}
	}
	counts.w(") GROUP BY isSpans, ServiceName")
	type svcCount struct {
		spans     bool
		svc       string
		n, newest int64
	}
	var rows []svcCount
	err := parallel(func() error {
		var err error
		countsLimited, err = b.r.query(ctx, counts, 2*b.o.MaxGroups, func(r driver.Rows) error {
			var c svcCount
			var isSpans uint8
			if err := r.Scan(&isSpans, &c.svc, &c.n, &c.newest); err != nil {
				return err
			}
			c.spans = isSpans == 1
			rows = append(rows, c)
			return nil
		})
		return err
	}, func() error {
		// First without dropping copies of roots (a single-threaded LIMIT BY over every root of
		// the window), with a check in the same aggregation that the window holds none: a
		// domain's roots counted once per span id (a hash of it) are as many as its rows — a
		// root's copies share its domain, and roots with the same span id in different traces
		// are as rare as 64-bit collisions — so equal only when no root came twice. Only when
		// the check fails is the count made again with copies dropped.
		perDomain := func(o runsOf) (copies bool, err error) {
			s := &sqlText{}
			s.w("SELECT domain, toInt64(count()), toInt64(countIf(status = 'error')), toInt64(max(ms))")
			if o.copies {
				s.w(", toUInt8(uniqExact(spanHash) != count())")
			} else {
				s.w(", toUInt8(0)")
			}
			s.w(" FROM ")
			b.runsSubquery(s, conv, q.Window, q.Service, telemetry.Window{}, o)
			s.w(" GROUP BY domain")
			domains = domains[:0]
			domainsLimited, err = b.r.query(ctx, s, b.o.MaxGroups, func(rows driver.Rows) error {
				var d telemetry.DomainActivity
				var c uint8
				if err := rows.Scan(&d.Domain, &d.SeenCount, &d.ErrorCount, &d.MostRecentMs, &c); err != nil {
					return err
				}
				copies = copies || c == 1
				domains = append(domains, d)
				return nil
			})
			return copies, err
		}
		// A domain's runs and failed runs are counted by their verdicts (R5), not their error
		// spans: no join of the error spans.
		copies, err := perDomain(runsOf{copies: true, noErrors: true})
		if err == nil && copies {
			_, err = perDomain(runsOf{noErrors: true})
		}
		return err
	})
	if err != nil {
		return telemetry.Activity{}, false, err
	}
	act.Scan.Limited = countsLimited || domainsLimited
	for _, c := range rows {
		a := act.Services.Touch(telemetry.ServiceOf(c.svc), c.newest)
		if c.spans {
			a.Spans += c.n
			act.Spans += c.n
			act.NewestSpanMs = max(act.NewestSpanMs, c.newest)
		} else {
			act.Logs += c.n
		}
		act.Scan.Scanned += c.n
	}
	for _, d := range domains {
		act.Domains[d.Domain] = d
	}
	return act, true, nil
}
