"""dashlint's PromQL reader: a lexer, the vector selectors and their label
matchers, and the checks of one dashboard query (job/instance matchers,
[$__rate_interval] ranges)."""

import re

RANGE_FUNCS = {"rate", "irate", "increase", "changes", "delta", "deriv"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
KEYWORDS = GROUPING | {"bool", "and", "or", "unless", "offset", "atan2", "inf", "nan"}
RATE_INTERVAL = ("$__rate_interval", "${__rate_interval}", "[[__rate_interval]]")

# ---------------------------------------------------------------- PromQL lexer

TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<dur>(?:\d+(?:ms|[smhdwy]))+(?![\w:]))
  | (?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<var>\$\{[^}]*\}|\$\w+|\[\[\w+\]\])
  | (?P<ident>[A-Za-z_:][\w:]*)
  | (?P<op>=~|!~|==|!=|<=|>=|[-+*/%^<>=@])
  | (?P<punct>[(),])
""", re.X)

OLD_VAR_RE = re.compile(r"\[\[\w+\]\]")
MATCHER_RE = re.compile(r"""\s*([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*
    ("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,|$)""", re.X)


class PromQLError(Exception):
    pass


def _bracketed(expr, i, close):
    """The index after the bracket closing at or after i, skipping strings."""
    while i < len(expr):
        c = expr[i]
        if c in "\"'`":
            m = TOKEN_RE.match(expr, i)
            if not m or m.lastgroup != "str":
                raise PromQLError("unterminated string at %d" % i)
            i = m.end()
            continue
        if c == close:
            return i + 1
        i += 1
    raise PromQLError("no closing %r" % close)


def tokenize(expr):
    """[(kind, text)]: kinds str, dur, num, var, ident, op, punct, matchers
    (the text inside {}), range (the text inside [])."""
    out = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "{" or c == "[" and not OLD_VAR_RE.match(expr, i):
            close = "}" if c == "{" else "]"
            end = _bracketed(expr, i + 1, close)
            out.append(("matchers" if c == "{" else "range", expr[i + 1:end - 1].strip()))
            i = end
            continue
        m = TOKEN_RE.match(expr, i)
        if not m:
            raise PromQLError("unexpected %r at %d" % (expr[i:i + 10], i))
        if m.lastgroup not in ("ws", "comment"):
            out.append((m.lastgroup, m.group()))
        i = m.end()
    depth = 0
    for kind, text in out:
        if text == "(" and kind == "punct":
            depth += 1
        elif text == ")" and kind == "punct":
            depth -= 1
            if depth < 0:
                raise PromQLError("unbalanced )")
    if depth:
        raise PromQLError("unbalanced (")
    return out


def parse_matchers(text):
    """[(label, op, value)] of a {} block's text."""
    found = []
    i = 0
    while i < len(text):
        m = MATCHER_RE.match(text, i)
        if not m:
            raise PromQLError("bad label matchers {%s}" % text)
        value = m.group(3)[1:-1]
        found.append((m.group(1), m.group(2), value))
        i = m.end()
    return found


def _closing(tokens, i):
    """Index of the ")" matching the "(" at tokens[i]."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == ("punct", "("):
            depth += 1
        elif tokens[j] == ("punct", ")"):
            depth -= 1
            if not depth:
                return j
    raise PromQLError("unbalanced (")


def selectors(tokens):
    """[(metric name or "", [(label, op, value)])] of every vector selector."""
    out = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, None)
        if kind == "ident":
            low = text.lower()
            if low in GROUPING and nxt == ("punct", "("):
                i = _closing(tokens, i + 1) + 1
                continue
            if low in KEYWORDS or nxt == ("punct", "(") or \
                    low in AGGREGATIONS and nxt[0] == "ident" and nxt[1].lower() in ("by", "without"):
                i += 1
                continue
            matchers = []
            if nxt[0] == "matchers":
                matchers = parse_matchers(nxt[1])
                i += 1
            out.append((text, matchers))
        elif kind == "matchers":
            out.append(("", parse_matchers(text)))
        i += 1
    return out


def range_problems(tokens):
    """Problems with the ranges of rate() and its kin."""
    problems = []
    for i, (kind, text) in enumerate(tokens):
        if kind != "ident" or text not in RANGE_FUNCS or i + 1 >= len(tokens) \
                or tokens[i + 1] != ("punct", "("):
            continue
        end = _closing(tokens, i + 1)
        depth = 0
        ranges = []
        for k, t in tokens[i + 2:end]:
            if (k, t) == ("punct", "("):
                depth += 1
            elif (k, t) == ("punct", ")"):
                depth -= 1
            elif k == "range" and depth == 0:
                ranges.append(t)
        if not ranges:
            problems.append("%s() has no range at its top level" % text)
        for r in ranges:
            window = r.split(":")[0].strip()
            if window not in RATE_INTERVAL:
                problems.append("%s() range [%s] is not [$__rate_interval]" % (text, r))
    return problems


def uses_var(value, name):
    return any(v in value for v in ("$" + name, "${" + name + "}", "[[" + name + "]]")) and \
        not re.search(r"\$%s\w" % re.escape(name), value)


def query_problems(expr):
    """Problems of one dashboard query."""
    if not isinstance(expr, str) or not expr.strip():
        return ["empty query"]
    try:
        tokens = tokenize(expr)
        sels = selectors(tokens)
        problems = range_problems(tokens)
    except PromQLError as e:
        return ["query does not parse: %s" % e]
    if not sels:
        problems.append("query has no metric selector")
    for name, matchers in sels:
        what = name or "{...}"
        for label in ("job", "instance"):
            if not any(l == label and op == "=~" and uses_var(v, label) for l, op, v in matchers):
                problems.append('selector %s has no %s=~"$%s" matcher' % (what, label, label))
    return problems
