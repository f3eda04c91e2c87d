package flows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
)

// maxKnownNames bounds the names an answer offers when a filter matched none of them.
const maxKnownNames = 10

// serviceLookup bounds the service names read to decide whether a service exists: far more
// than an app has, so that a service late in the alphabet is not called unknown.
const serviceLookup = 1000

// emptyAnswer says why an answer holds nothing: a service filter that names no service the
// source holds (Unknown, with the services that exist), a service that sent nothing in the
// window, or a window without any telemetry. An answer with data, or one whose emptiness is
// the good news (no errors while the app ran), has an empty Hint.
type emptyAnswer struct {
	// Unknown is true when no telemetry of the filter's service is stored at all.
	Unknown bool
	// Known are the services stored (sorted, at most maxKnownNames) when Unknown.
	Known []string
	// Hint is the sentence the answer carries.
	Hint string
}

// whyEmpty explains an empty answer for the service filter (may be empty) over window w. what
// names the empty collection ("run", "database operation"); quietOK is true for answers where
// silence in a window that has telemetry needs no explaining (no errors).
func (f *Flows) whyEmpty(ctx context.Context, src telemetry.Source, w telemetry.Window, service, what string, quietOK bool) emptyAnswer {
	if service != "" {
		all, err := src.Services(ctx, serviceLookup)
		if err != nil {
			return emptyAnswer{}
		}
		if !slices.Contains(all, service) {
			return unknownService(service, all)
		}
		if quietOK {
			return emptyAnswer{}
		}
		return emptyAnswer{Hint: fmt.Sprintf("service %q has no %s in the window (its telemetry is older, or it sent none of this kind); "+
			"widen window, or call get_app_status for what it sent", service, what)}
	}
	info := src.Describe(ctx)
	switch {
	case !info.Reachable:
		return emptyAnswer{Hint: "the telemetry source did not answer: run the doctor tool"}
	case info.NewestDataMs == 0:
		return emptyAnswer{Hint: "no telemetry is stored yet: point the app's OTLP exporter at the receiver (the doctor tool shows how)"}
	case info.NewestDataMs < w.StartMs:
		ago := time.Duration(w.EndMs-info.NewestDataMs) * time.Millisecond
		return emptyAnswer{Hint: fmt.Sprintf("no telemetry in the window: the newest is %s old; widen window", ago.Round(time.Second))}
	case quietOK:
		return emptyAnswer{}
	}
	return emptyAnswer{Hint: fmt.Sprintf("no %s matched the filters in the window", what)}
}

// unknownService is the answer to a service filter that names no stored service: the services
// that exist, and the one that differs only in case if there is one.
func unknownService(service string, all []string) emptyAnswer {
	known := all[:min(len(all), maxKnownNames)]
	hint := fmt.Sprintf("no service is named %q", service)
	for _, s := range all {
		if strings.EqualFold(s, service) {
			return emptyAnswer{Unknown: true, Known: known, Hint: fmt.Sprintf("%s; service names are case-sensitive: did you mean %q?", hint, s)}
		}
	}
	switch {
	case len(all) == 0:
		hint += "; no telemetry is stored yet"
	case len(all) > len(known):
		hint += fmt.Sprintf("; services: %s and %d more", strings.Join(known, ", "), len(all)-len(known))
	default:
		hint += "; services: " + strings.Join(known, ", ")
	}
	return emptyAnswer{Unknown: true, Known: known, Hint: hint}
}

// unknownNameErr maps a filter naming something the conventions do not define to an argument
// error listing the names that exist.
func unknownNameErr(err error) (error, bool) {
	var ue *telemetry.UnknownNameError
	if !errors.As(err, &ue) {
		return nil, false
	}
	return invalidArg("/"+ue.Arg, "must be one of: "+strings.Join(ue.Known, ", ")), true
}
