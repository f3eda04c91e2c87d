'use strict';
// Loaded with `node --require ./telemetry.js app.js`, before anything else: the OpenTelemetry
// Node SDK with every auto-instrumentation. Exporters, protocol, endpoint and service name
// come from the standard OTEL_* environment variables.
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { getNodeAutoInstrumentations } = require('@opentelemetry/auto-instrumentations-node');

const sdk = new NodeSDK({
  instrumentations: [getNodeAutoInstrumentations()],
});
sdk.start();

let stopping = false;
function shutdown() {
  if (stopping) return;
  stopping = true;
  sdk.shutdown()
    .catch((err) => console.error('telemetry shutdown failed', err))
    .finally(() => process.exit(0));
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
