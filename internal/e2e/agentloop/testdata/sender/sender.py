"""A small instrumented program for the agent-loop tests: it sends OTLP/JSON spans to the
endpoint the standard OTEL_* variables name, carrying OTEL_RESOURCE_ATTRIBUTES as its resource,
the way an OpenTelemetry SDK does. Modes:

  once SERVICE N          one trace of N spans, then exit
  pair DIR N              wait until a second "pair" process is running, then one trace of N spans
  late DIR MS             fork a detached child that sends "within-grace" MS ms after this process
                          exits, then "after-grace" once DIR/go exists; this process exits at once
  chatty DIR              fork a detached child that sends a span every 50 ms until DIR/go exists,
                          then "last"; this process exits at once
  claim ID                one span that names invocation ID itself, whatever the environment says
  fail FILE               run code compiled as FILE that raises; send its traceback as the exception
  env                     print what the OTEL_* environment points at
"""
import json, os, sys, time, traceback, urllib.request

DEADLINE = time.time() + 30  # a child left behind ends by itself


def resource(service, invocation=None):
    attrs = [{"key": "service.name", "value": {"stringValue": service}}]
    for kv in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            if k.strip() == "runlens.invocation.id" and invocation is not None:
                continue
            attrs.append({"key": k.strip(), "value": {"stringValue": v}})
    if invocation is not None:
        attrs.append({"key": "runlens.invocation.id", "value": {"stringValue": invocation}})
    return {"attributes": attrs}


def send(service, names, error=None, invocation=None):
    trace_id, now = os.urandom(16).hex(), time.time_ns()
    root = os.urandom(8).hex()
    spans = []
    for i, name in enumerate(names):
        span = {"traceId": trace_id, "spanId": root if i == 0 else os.urandom(8).hex(), "name": name,
                "kind": 2 if i == 0 else 1, "startTimeUnixNano": str(now - 2000000 + i),
                "endTimeUnixNano": str(now - i)}
        if i > 0:
            span["parentSpanId"] = root
        spans.append(span)
    if error is not None:
        typ, msg, tb = error
        spans[-1]["status"] = {"code": 2, "message": msg}
        spans[-1]["events"] = [{"name": "exception", "timeUnixNano": str(now), "attributes": [
            {"key": "exception.type", "value": {"stringValue": typ}},
            {"key": "exception.message", "value": {"stringValue": msg}},
            {"key": "exception.stacktrace", "value": {"stringValue": tb}}]}]
    body = {"resourceSpans": [{"resource": resource(service, invocation),
                               "scopeSpans": [{"scope": {"name": "sender.py"}, "spans": spans}]}]}
    url = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def wait_for(cond):
    while not cond():
        if time.time() > DEADLINE:
            sys.exit(3)
        time.sleep(0.01)


def detach(run):
    """Fork a child that leaves the command's process group and its output, as a daemon does,
    and runs run() after this process has exited."""
    parent = os.getpid()
    # The parent returns (and exits) only once the child has left the process group: a
    # command's group is stopped when the command ends, and a child still in it would go too.
    r, w = os.pipe()
    if os.fork() > 0:
        os.close(w)
        os.read(r, 1)
        os.close(r)
        return
    os.close(r)
    os.setsid()
    os.write(w, b"x")
    os.close(w)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    wait_for(lambda: os.getppid() != parent)
    try:
        run()
    finally:
        os._exit(0)


def main(mode, args):
    if mode == "once":
        send(args[0], ["step %d" % i for i in range(int(args[1]))])
    elif mode == "pair":
        d, n = args[0], int(args[1])
        open(os.path.join(d, "%d.ready" % os.getpid()), "w").close()
        wait_for(lambda: len([f for f in os.listdir(d) if f.endswith(".ready")]) >= 2)
        send("pair", ["pair step %d" % i for i in range(n)])
    elif mode == "late":
        d, ms = args[0], int(args[1])

        def run():
            with open(os.path.join(d, "pid"), "w") as f:
                f.write(str(os.getpid()))
            time.sleep(ms / 1000)  # the behaviour under test: telemetry sent after the command ended
            send("late", ["within-grace"])
            wait_for(lambda: os.path.exists(os.path.join(d, "go")))
            send("late", ["after-grace"])
            open(os.path.join(d, "done"), "w").close()
        detach(run)
    elif mode == "chatty":
        d = args[0]

        def run():
            with open(os.path.join(d, "pid"), "w") as f:
                f.write(str(os.getpid()))
            sent = 0
            while not os.path.exists(os.path.join(d, "go")) and sent < 400:
                send("chatty", ["tick"])
                sent += 1
                time.sleep(0.05)  # the behaviour under test: a process that keeps sending
            send("chatty", ["last"])
            open(os.path.join(d, "done"), "w").close()
        detach(run)
    elif mode == "claim":
        send("claimer", ["claimed"], invocation=args[0])
    elif mode == "fail":
        path = args[0]
        src = "def handler():\n    raise ValueError('pricing rule failed')\nhandler()\n"
        try:
            exec(compile(src, path, "exec"), {})
        except Exception as e:
            send("failing", ["handle"], error=(type(e).__name__, str(e), traceback.format_exc()))
        print("failed in", path)
        sys.exit(1)
    elif mode == "env":
        for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            print("%s=%s" % (k, os.environ.get(k, "")))
        print("tagged=%s" % ("runlens.invocation.id=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")))


main(sys.argv[1], sys.argv[2:])
