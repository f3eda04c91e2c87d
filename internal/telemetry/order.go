package telemetry

import (
	"cmp"
	"slices"
)

// SortRuns orders runs newest first, then by trace id and run id. It is stable: runs that tie
// (duplicates of a root span) keep the order of the scan, which every backend returns alike.
func SortRuns(runs []RunSummary) {
	slices.SortStableFunc(runs, func(a, b RunSummary) int {
		return cmp.Or(cmp.Compare(b.StartMs, a.StartMs), cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.ID, b.ID))
	})
}

// SortServiceActivity orders services busiest first, then by name.
func SortServiceActivity(a []ServiceActivity) {
	slices.SortFunc(a, func(x, y ServiceActivity) int {
		return cmp.Or(cmp.Compare(y.Spans, x.Spans), cmp.Compare(x.Service, y.Service))
	})
}

// ServiceTallies are a window's activity per service, the rows of a status answer: the engine
// counts them from scans, a backend server-side, and both list them by List.
type ServiceTallies map[string]*ServiceActivity

// Touch returns service's tally, made on first use, last seen no earlier than ms (unix ms).
func (t ServiceTallies) Touch(service string, ms int64) *ServiceActivity {
	a := t[service]
	if a == nil {
		a = &ServiceActivity{Service: service}
		t[service] = a
	}
	a.LastSeenMs = max(a.LastSeenMs, ms)
	return a
}

// List sets st's count of services and its busiest max of them (DefaultMaxServices when 0),
// in SortServiceActivity's order.
func (t ServiceTallies) List(st *Status, maxServices int) {
	st.Services = int64(len(t))
	for _, a := range t {
		st.ServiceActivity = append(st.ServiceActivity, *a)
	}
	SortServiceActivity(st.ServiceActivity)
	if n := cmp.Or(maxServices, DefaultMaxServices); len(st.ServiceActivity) > n {
		st.ServiceActivity = st.ServiceActivity[:n]
	}
}
