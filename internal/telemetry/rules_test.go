package telemetry

import (
	"slices"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// The cases below are the shapes real instrumentation libraries send (docs/semantics.md), each
// reduced to the spans that matter.

const ms = int64(1e6)

type spanOpt func(*SpanRow)

func mkSpan(id, parent, name, kind, service string, start, end int64, opts ...spanOpt) SpanRow {
	s := SpanRow{TraceID: "t1", SpanID: id, ParentSpanID: parent, Name: name, Kind: kind, Service: service,
		StartNs: start * ms, DurationNs: (end - start) * ms, StatusCode: CodeUnset, Attributes: conventions.Attributes{}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func failed(msg string) spanOpt {
	return func(s *SpanRow) { s.StatusCode, s.StatusMessage = CodeError, msg }
}

func attr(k, v string) spanOpt { return func(s *SpanRow) { s.Attributes[k] = v } }

func exception(typ, msg, stack string) spanOpt {
	return func(s *SpanRow) {
		a := conventions.Attributes{"exception.type": typ, "exception.message": msg}
		if stack != "" {
			a["exception.stacktrace"] = stack
		}
		s.Events = append(s.Events, SpanEvent{TimeNs: s.EndNs(), Name: "exception", Attributes: a})
	}
}

func event(name string, attrs conventions.Attributes) spanOpt {
	return func(s *SpanRow) {
		s.Events = append(s.Events, SpanEvent{TimeNs: s.StartNs, Name: name, Attributes: attrs})
	}
}

func errLog(span, body string, attrs conventions.Attributes) LogRow {
	return LogRow{TimeNs: 50 * ms, TraceID: "t1", SpanID: span, Service: "app", SeverityNumber: 17, SeverityText: "ERROR",
		Body: body, Attributes: attrs}
}

func otelConventions(t *testing.T) *conventions.Conventions {
	t.Helper()
	conv, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

func TestARunsVerdictIsItsEntrySpansOwn(t *testing.T) {
	conv := otelConventions(t)
	tests := []struct {
		name string
		root SpanRow
		want string
	}{
		{"a server span that answered 200 is ok", mkSpan("r", "", "GET /", KindServer, "web", 0, 10, attr("http.response.status_code", "200")), StatusOK},
		{"a server span that answered 503 without a status is error", mkSpan("r", "", "GET /", KindServer, "web", 0, 10, attr("http.response.status_code", "503")), StatusError},
		{"the legacy status key counts too", mkSpan("r", "", "GET /", KindServer, "web", 0, 10, attr("http.status_code", "500")), StatusError},
		{"a 404 is the client's mistake, not a failed run", mkSpan("r", "", "GET /", KindServer, "web", 0, 10, attr("http.response.status_code", "404")), StatusOK},
		{"a client span's 500 is not its run's answer", mkSpan("r", "", "GET", KindClient, "cli", 0, 10, attr("http.response.status_code", "500")), StatusOK},
		{"status Error fails the run", mkSpan("r", "", "GET /", KindServer, "web", 0, 10, failed("")), StatusError},
		{"an entry span without any status or code is ok", mkSpan("r", "", "work", KindInternal, "web", 0, 10), StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunFromRoot(conv, &tt.root).Status; got != tt.want {
				t.Fatalf("status %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAnErrorThatDidNotReachTheEntrySpanIsHandled(t *testing.T) {
	conv := otelConventions(t)
	spans := []SpanRow{
		mkSpan("r", "", "GET /cart", KindServer, "web", 0, 100, attr("http.response.status_code", "200")),
		mkSpan("c1", "r", "GET", KindClient, "web", 10, 30, failed("Command timed out")),
		mkSpan("c2", "r", "GET", KindClient, "web", 31, 40),
	}
	occ := TraceOccurrences(conv, spans, nil)
	if len(occ) != 1 || !occ[0].Handled || occ[0].Decisive || occ[0].Message != "Command timed out" {
		t.Fatalf("occurrences %+v, want one handled timeout", occ)
	}
}

func TestSiblingCopiesOfOneExceptionAreOneOccurrence(t *testing.T) {
	conv := otelConventions(t)
	stack := "Error: payment declined\n    at checkout (/srv/app.js:31:11)"
	spans := []SpanRow{
		mkSpan("r", "", "POST /checkout", KindServer, "shop", 0, 100, failed(""), exception("Error", "payment declined", stack),
			attr("http.response.status_code", "500")),
		mkSpan("h", "r", "request handler - /checkout", KindInternal, "shop", 5, 40, failed("payment declined"),
			exception("Error", "payment declined", stack)),
		mkSpan("m", "r", "middleware - errorHandler", KindInternal, "shop", 41, 60, failed("payment declined"),
			exception("Error", "payment declined", stack)),
	}
	occ := TraceOccurrences(conv, spans, []LogRow{errLog("m", "request failed", conventions.Attributes{"exception.message": "payment declined"})})
	if len(occ) != 1 || occ[0].Message != "payment declined" || occ[0].OriginSpanID != "h" || !occ[0].Decisive || occ[0].Handled {
		t.Fatalf("occurrences %+v, want one decisive occurrence at the handler", occ)
	}
}

func TestAnInstrumentationsTemplateNeverWinsOverTheCausesText(t *testing.T) {
	conv := otelConventions(t)
	const specific = `relation "missing_table" does not exist`
	const template = "PostgreSQL error of type 'error' occurred (code: 42P01)"
	query := func(opts ...spanOpt) SpanRow {
		return mkSpan("q", "h", "pg.query:SELECT shop", KindClient, "shop", 10, 12,
			append([]spanOpt{failed(specific), exception("42P01", template, "")}, opts...)...)
	}
	t.Run("the handler threw the driver's error with its stack", func(t *testing.T) {
		spans := []SpanRow{
			mkSpan("r", "", "GET /report", KindServer, "shop", 0, 20, failed(""), attr("http.response.status_code", "500")),
			mkSpan("h", "r", "request handler - /report", KindInternal, "shop", 1, 13, failed(specific),
				exception("error", specific, "error: "+specific+"\n    at report (/srv/app.js:47:5)")),
			query(),
		}
		occ := TraceOccurrences(conv, spans, nil)
		if len(occ) != 1 || occ[0].Message != specific {
			t.Fatalf("occurrences %+v, want one with %q", occ, specific)
		}
	})
	t.Run("only the app's logger repeated the status", func(t *testing.T) {
		spans := []SpanRow{
			mkSpan("r", "", "GET /report", KindServer, "shop", 0, 20, attr("http.response.status_code", "500")),
			mkSpan("h", "r", "report", KindInternal, "shop", 1, 13),
			query(),
		}
		occ := TraceOccurrences(conv, spans, []LogRow{errLog("h", specific, nil)})
		if len(occ) != 1 || occ[0].Message != specific {
			t.Fatalf("occurrences %+v, want one with %q", occ, specific)
		}
	})
	t.Run("a stackless exception nobody contradicts is the text", func(t *testing.T) {
		spans := []SpanRow{
			mkSpan("r", "", "job", KindInternal, "worker", 0, 20),
			mkSpan("q", "r", "SELECT", KindClient, "worker", 1, 5, failed("query failed"), exception("QueryError", "disk full", "")),
		}
		occ := TraceOccurrences(conv, spans, nil)
		if len(occ) != 1 || occ[0].Message != "disk full" {
			t.Fatalf("occurrences %+v, want the exception's text", occ)
		}
	})
}

func TestWhatTheFailingSpanSaidWinsOverACallersLog(t *testing.T) {
	conv := otelConventions(t)
	// An OpenTracing-era service logs the reason as an error span event; its caller logs a
	// fixed "place order failed".
	spans := []SpanRow{
		mkSpan("r", "", "POST /checkout", KindServer, "front", 0, 100, failed(""), attr("http.status_code", "500")),
		mkSpan("g", "r", "checkout.Place", KindServer, "checkout", 5, 90, failed("address check failed: legacy answered 500")),
		mkSpan("c", "g", "HTTP POST", KindClient, "checkout", 10, 40, failed("")),
		mkSpan("v", "c", "POST /validate", KindServer, "legacy", 12, 38, failed(""), attr("http.status_code", "500"),
			event("error", conventions.Attributes{"event": "error", "message": "address validation failed: zip code is not deliverable"})),
	}
	logs := []LogRow{errLog("g", "place order failed", conventions.Attributes{"err": "address check failed"})}
	occ := TraceOccurrences(conv, spans, logs)
	if len(occ) != 1 || occ[0].Message != "address validation failed: zip code is not deliverable" || occ[0].Service != "legacy" ||
		occ[0].EntryService != "front" {
		t.Fatalf("occurrences %+v, want the validation message from legacy, entered at front", occ)
	}
}

func TestTheCauseThatFailedTheRunLeadsItsAnswer(t *testing.T) {
	conv := otelConventions(t)
	// A retried cache timeout early in a request that later failed for another reason: both
	// chains reach the root through the failed handler span.
	spans := []SpanRow{
		mkSpan("r", "", "POST /checkout", KindServer, "front", 0, 100, failed(""), attr("http.status_code", "500")),
		mkSpan("g", "r", "checkout.Place", KindServer, "checkout", 5, 90, failed("place order failed")),
		mkSpan("k", "g", "blpop", KindClient, "checkout", 6, 21, failed("i/o timeout")),
		mkSpan("k2", "g", "blpop", KindClient, "checkout", 22, 25),
		mkSpan("i", "g", "INSERT orders", KindClient, "checkout", 30, 40, failed("check constraint qty_limit failed"),
			exception("mysql.MySQLError", "check constraint qty_limit failed", "")),
	}
	occ := TraceOccurrences(conv, spans, nil)
	var decisive []string
	for _, o := range occ {
		if o.Decisive {
			decisive = append(decisive, o.Message)
		}
	}
	if len(occ) != 2 || len(decisive) != 1 || decisive[0] != "check constraint qty_limit failed" {
		t.Fatalf("occurrences %+v: decisive %q, want the constraint failure", occ, decisive)
	}
}

func TestAGroupListsTheFirstFiveEntryServicesByName(t *testing.T) {
	got := FirstEntryServices([]string{"web", "admin", "web", "cron", "api", "zeta", "batch", "mobile"})
	if want := []string{"admin", "api", "batch", "cron", "mobile"}; !slices.Equal(got, want) || cap(got) != MaxRelated {
		t.Fatalf("entry services %q (cap %d), want %q: distinct, by name, at most %d", got, cap(got), want, MaxRelated)
	}
	if got := FirstEntryServices(nil); got != nil {
		t.Fatalf("no entry service gives %q, want nil", got)
	}
}

// ServiceTallies list every service in the count and the busiest first, bounded, each last
// seen at its newest touch.
func TestServiceTalliesListTheBusiestWithinTheBound(t *testing.T) {
	tl := ServiceTallies{}
	tl.Touch("api", 5).Spans += 3
	tl.Touch("db", 9).Spans += 7
	tl.Touch("api", 2).Spans++
	tl.Touch("web", 1)
	var st Status
	tl.List(&st, 2)
	if st.Services != 3 || len(st.ServiceActivity) != 2 {
		t.Fatalf("services %d, listed %d; want 3 counted and 2 listed", st.Services, len(st.ServiceActivity))
	}
	if a := st.ServiceActivity; a[0].Service != "db" || a[1].Service != "api" || a[1].Spans != 4 || a[1].LastSeenMs != 5 {
		t.Fatalf("listed %+v; want db, then api with 4 spans last seen at 5", a)
	}
}
