#!/usr/bin/python3
"""Test helpers for kvmmmu-exporter against a real Prometheus.

  promcheck.py parse FILE         a scrape, read by python3-prometheus-client's
                                  parser (a second parser besides promtool);
                                  every histogram's buckets ascend, are
                                  cumulative, +Inf equals _count
  promcheck.py query URL EXPR     one instant query through the HTTP API: each
                                  sample as "LABELS VALUE"; exit 3 on no data,
                                  2 on an error (a query that does not parse)
  promcheck.py queries URL FILE   every query of FILE (lines "SOURCE<TAB>EXPR")
                                  in one process: one line each,
                                  "SOURCE<TAB>RC<TAB>OUTPUT" (RC as query's
                                  exit code, OUTPUT's lines joined by " | ")
  promcheck.py idle HOST PORT N SECS   N idle connections held SECS seconds
  promcheck.py crowd HOST PORT N       N idle connections: how many the server closed at once
  promcheck.py trickle HOST PORT N SECS   N connections each sending a request
                                  header a byte every 0.25 s (slowloris) for
                                  SECS seconds: how many the server closed, when
  promcheck.py slowread HOST PORT PATH SECS   a GET whose answer is read one
                                  byte a second for SECS seconds
  promcheck.py replay PORT FILE...   serves the scrapes FILE... as /metrics on
                                  127.0.0.1:PORT, one per request, the last
                                  one again after that (recorded scrapes, for
                                  a Prometheus)
"""
import json
import math
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def parse(path):
    from prometheus_client.parser import text_string_to_metric_families

    text = open(path, encoding="utf-8").read()
    problems, histograms = [], 0
    for fam in text_string_to_metric_families(text):
        if fam.type != "histogram":
            continue
        series = {}
        for s in fam.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, {"buckets": [], "count": None})
            if s.name.endswith("_bucket"):
                series[key]["buckets"].append((float(s.labels["le"]), s.value))
            elif s.name.endswith("_count"):
                series[key]["count"] = s.value
        for key, h in series.items():
            histograms += 1
            les = [le for le, _ in h["buckets"]]
            values = [v for _, v in h["buckets"]]
            where = "%s%s" % (fam.name, dict(key))
            if les != sorted(les) or len(set(les)) != len(les):
                problems.append(where + ": le not ascending")
            if not les or not math.isinf(les[-1]):
                problems.append(where + ": no +Inf bucket")
            elif values[-1] != h["count"]:
                problems.append(where + ": +Inf %s != _count %s" % (values[-1], h["count"]))
            if any(b < a for a, b in zip(values, values[1:])):
                problems.append(where + ": buckets not cumulative")
    for p in problems:
        print(p)
    if not histograms:
        print("no histogram in the scrape")
        return 1
    print("%d histograms checked" % histograms)
    return 1 if problems else 0


def query(url, expr, out=None):
    out = [] if out is None else out
    rc = run_query(url, expr, out)
    for line in out:
        print(line)
    return rc


def run_query(url, expr, out):
    """query's work: its lines appended to out, its exit code returned."""
    q = urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=10) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:
        out.append(json.load(e).get("error", str(e)))
        return 2
    except (urllib.error.URLError, OSError) as e:
        out.append(str(e))
        return 1
    if answer.get("status") != "success":
        out.append(answer.get("error", "query failed"))
        return 2
    data = answer["data"]
    if data["resultType"] == "scalar":
        out.append(str(data["result"][1]))
        return 0
    if not data["result"]:
        return 3
    for r in data["result"]:
        labels = ",".join("%s=%s" % kv for kv in sorted(r["metric"].items()))
        out.append("{%s} %s" % (labels, r["value"][1]))
    return 0


def queries(url, path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            src, _, expr = line.partition("\t")
            out = []
            rc = run_query(url, expr, out)
            print("%s\t%d\t%s" % (src, rc, " | ".join(out)), flush=True)
    return 0


def idle(host, port, n, secs):
    conns = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=5)
        conns.append(s)
    print("%d connections open" % len(conns), flush=True)
    time.sleep(secs)
    for s in conns:
        s.close()
    return 0


def crowd(host, port, n):
    """N connections at once, idle: how many the server closed within a second
    (refused past its limit), and how many it keeps open."""
    conns = [socket.create_connection((host, port), timeout=5) for _ in range(n)]
    time.sleep(1)
    closed = 0
    for s in conns:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("%d connections, %d closed by the server, %d open" % (n, closed, n - closed),
          flush=True)
    for s in conns:
        s.close()
    return 0


def trickle(host, port, n, secs):
    """N slowloris clients: a header a byte at a time, never whole. Prints a
    line once they are all open, and at the end how many the server closed,
    the first and the last after how long."""
    header = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "
    conns = [socket.create_connection((host, port), timeout=5) for _ in range(n)]
    for s in conns:
        s.setblocking(False)
    start = time.time()
    print("%d connections trickling" % n, flush=True)
    closed = {}
    i = 0
    while time.time() - start < secs:
        for k, s in enumerate(conns):
            if k in closed:
                continue
            try:
                s.send(header[i:i + 1] if i < len(header) else b"a")
                if s.recv(1) == b"":
                    closed[k] = time.time() - start
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                closed[k] = time.time() - start
        i += 1
        time.sleep(0.25)
    t = sorted(closed.values())
    print("%d trickling, %d closed by the server, first after %.1f s, last after %.1f s"
          % (n, len(t), t[0] if t else 0, t[-1] if t else 0), flush=True)
    for s in conns:
        s.close()
    return 0


def slowread(host, port, path, secs):
    s = socket.create_connection((host, port), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, host)).encode())
    got = b""
    end = time.time() + secs
    while time.time() < end:
        try:
            b = s.recv(1)
        except OSError:
            break
        if not b:
            break
        got += b
        time.sleep(1)
    s.close()
    print("read %d bytes" % len(got))
    return 0


def replay(port, files):
    import http.server

    bodies = [open(f, "rb").read() for f in files]
    state = {"next": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = bodies[min(state["next"], len(bodies) - 1)]
            state["next"] += 1
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "parse":
        return parse(argv[2])
    if len(argv) >= 4 and argv[1] == "query":
        return query(argv[2], argv[3])
    if len(argv) >= 4 and argv[1] == "queries":
        return queries(argv[2], argv[3])
    if len(argv) >= 6 and argv[1] == "idle":
        return idle(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    if len(argv) >= 5 and argv[1] == "crowd":
        return crowd(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) >= 4 and argv[1] == "replay":
        return replay(int(argv[2]), argv[3:])
    if len(argv) >= 6 and argv[1] == "trickle":
        return trickle(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    if len(argv) >= 6 and argv[1] == "slowread":
        return slowread(argv[2], int(argv[3]), argv[4], float(argv[5]))
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
