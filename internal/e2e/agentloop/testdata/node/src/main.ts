// A test run instrumented with the OpenTelemetry JS SDK, configured only by the standard
// OTEL_* environment: it runs one check that throws, records the exception on its span,
// flushes the exporter and exits 1.
const { trace, SpanStatusCode, SpanKind } = require("@opentelemetry/api");
const { NodeTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-node");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { detectResources, envDetector, resourceFromAttributes } = require("@opentelemetry/resources");
const { ATTR_SERVICE_NAME } = require("@opentelemetry/semantic-conventions");
const { applyDiscount } = require("./cart/checkout.ts");
const { walk } = require("./cart/deep.ts");

async function main(mode: string): Promise<number> {
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: "cart-node-tests" })
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const tracer = provider.getTracer("cart-tests");
  let failed = false;
  tracer.startActiveSpan("test checkout", { kind: SpanKind.SERVER }, (span: any) => {
    try {
      if (mode === "deep") {
        Error.stackTraceLimit = Infinity;
        walk(10000);
      } else {
        applyDiscount({ items: 3, percent: 0 });
      }
    } catch (err: any) {
      failed = true;
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    } finally {
      span.end();
    }
  });
  await provider.shutdown();
  if (failed) {
    console.log("not ok 1 - checkout");
    return 1;
  }
  console.log("ok 1 - checkout");
  return 0;
}

main(process.argv[2] ?? "checkout").then((code) => process.exit(code), (err) => {
  console.error("test harness:", err);
  process.exit(2);
});
