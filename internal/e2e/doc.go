// Package e2e holds tests only. They load the shared telemetry fixture into fresh embedded
// stores in every way an application can deliver it — stored directly, and through the real
// OTLP/HTTP receiver as sent by the OpenTelemetry Go SDK exporters, as raw OTLP/JSON with hex
// ids, and as gzip protobuf — and require every telemetry tool to give the same answer from each,
// field by field, and the fixture's known answers on the fields that matter most. A receiver or
// store bug that changes what an agent sees cannot hide behind four equally wrong answers.
package e2e
