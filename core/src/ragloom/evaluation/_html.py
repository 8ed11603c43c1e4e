"""An evaluation as one self-contained HTML page (no script, no network: styles and the chart
are inline)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._report import EvaluationReport, Scores, SetupResult

__all__ = ["render_html"]

#: Line colours of the set-ups in the chart (distinct in colour and for colour-blind readers).
_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:72rem;
padding:1rem 1.25rem;color:#1b1b1b;background:#fff}
h1{font-size:1.5rem;margin:.2rem 0 .4rem}h2{font-size:1.2rem;margin:1.6rem 0 .5rem}
.meta{color:#555;margin:0 0 1rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}th{background:#f3f4f6}
td.q{text-align:left;max-width:28rem}td.l{text-align:left}
.miss{color:#b00020;font-weight:600}.hit{color:#0a6b2d}.warn{color:#8a5a00}
.sub{color:#444;font-size:.9em;margin:.15rem 0 0 0;padding-left:1rem}
.chart{max-width:40rem;width:100%;height:auto}
.legend span{display:inline-block;margin-right:1rem}.sw{display:inline-block;width:.9rem;
height:.9rem;margin-right:.3rem;vertical-align:-.1rem;border-radius:2px}
.scroll{overflow-x:auto}
"""


def _pct(value: float) -> str:
    return f"{value:.3f}"


def _scores_table(rows: list[tuple[str, Scores]], ks: list[int], first: str) -> str:
    head = "".join(f"<th>R@{k}</th>" for k in ks) + "".join(f"<th>Hit@{k}</th>" for k in ks)
    # citation recall and precision, when an answerer ran
    cited = any(scores.citation_recall is not None for _, scores in rows)
    # routing by collection, when a set-up routes by the collections of its index
    routed = any(scores.routed_facets is not None for _, scores in rows)
    out = [
        "<div class=scroll><table><thead><tr>"
        f"<th>{escape(first)}</th><th>questions</th><th>facets</th>{head}"
        "<th>MRR</th><th>nDCG@10</th>"
        + ("<th>cite-R</th><th>cite-P</th>" if cited else "")
        + ("<th>routed</th><th>routed-Q</th>" if routed else "")
        + "</tr></thead><tbody>"
    ]
    for name, scores in rows:
        cells = "".join(f"<td>{_pct(scores.recall(k))}</td>" for k in ks)
        cells += "".join(f"<td>{_pct(scores.success(k))}</td>" for k in ks)
        extra = "".join(
            f"<td>{'-' if value is None else _pct(value)}</td>"
            for value in (scores.citation_recall, scores.citation_precision)
        ) if cited else ""
        extra += "".join(
            f"<td>{'-' if value is None else _pct(value)}</td>"
            for value in (scores.routed_facets, scores.routed_questions)
        ) if routed else ""
        out.append(
            f"<tr><td>{escape(name)}</td><td>{scores.questions}</td><td>{scores.facets}</td>"
            f"{cells}<td>{_pct(scores.mrr)}</td><td>{_pct(scores.ndcg)}</td>{extra}</tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _chart(report: EvaluationReport) -> str:
    """Recall@k of every set-up as lines over k (an inline SVG)."""
    width, height, left, bottom, top, right = 560, 300, 48, 36, 14, 16
    ks = report.ks
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / (len(ks) - 1) if len(ks) > 1 else plot_w / 2)

    def y(value: float) -> float:
        return top + plot_h * (1 - value)

    parts = [
        f'<svg class=chart viewBox="0 0 {width} {height}" role="img" '
        'aria-label="facet recall at each k, one line per set-up">'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            'stroke="#e3e3e3"/>'
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" font-size="11" text-anchor="end">'
            f"{tick:.2f}</text>"
        )
    for i, k in enumerate(ks):
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - bottom + 18}" font-size="11" '
            f'text-anchor="middle">k={k}</text>'
        )
    for n, setup in enumerate(report.setups):
        colour = _COLOURS[n % len(_COLOURS)]
        points = " ".join(
            f"{x(i):.1f},{y(setup.overall.recall(k)):.1f}" for i, k in enumerate(ks)
        )
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{points}"/>'
        )
        for i, k in enumerate(ks):
            value = setup.overall.recall(k)
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3.5" fill="{colour}">'
                f"<title>{escape(setup.name)}: recall@{k} = {value:.3f}</title></circle>"
            )
    parts.append("</svg>")
    legend = "".join(
        f'<span><i class=sw style="background:{_COLOURS[n % len(_COLOURS)]}"></i>'
        f"{escape(s.name)}</span>"
        for n, s in enumerate(report.setups)
    )
    return "".join(parts) + f"<div class=legend>{legend}</div>"


def _questions_table(setup: SetupResult) -> str:
    out = [
        f"<h3>{escape(setup.name)}</h3><div class=scroll><table><thead><tr><th>id</th>"
        "<th>question and sub-queries (route)</th><th>kind</th><th>facets</th>"
        "<th>ms</th></tr></thead><tbody>"
    ]
    for q in setup.questions:
        plan = "".join(
            f"<div class=sub>{escape(sub)} <i>({escape(route)})</i></div>"
            for sub, route in zip(q.sub_queries, q.routes, strict=False)
        )
        facets = []
        for facet in q.facets:
            expected = escape(" | ".join(facet.expected))
            if facet.rank is None:
                facets.append(f"<div><span class=miss>missed</span> {expected}</div>")
            else:
                facets.append(f"<div><span class=hit>#{facet.rank}</span> {expected}</div>")
        facets.extend(
            f"<div class=warn>facet {escape(label)}: not judged (document not in the index)"
            "</div>" for label in q.unjudged
        )
        if q.error:
            facets.append(f"<div class=miss>error: {escape(q.error)}</div>")
        out.append(
            f"<tr><td>{escape(q.id)}</td><td class=q>{escape(q.question)}{plan}</td>"
            f"<td class=l>{escape(q.kind)}</td><td class=l>{''.join(facets)}</td>"
            f"<td>{q.seconds * 1000:.0f}</td></tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def render_html(report: EvaluationReport) -> str:
    """The report as a page: set-ups side by side, recall@k chart, per-kind tables,
    differences between set-ups, and every question with its plan and facets."""
    ks = report.ks
    body = [
        "<h1>ragloom eval</h1>",
        f"<p class=meta>{escape(report.questions_file)} &middot; "
        f"{report.setups[0].overall.questions if report.setups else 0} questions &middot; "
        f"ragloom {escape(report.ragloom_version)}</p>",
        "<h2>Set-ups</h2>",
        _scores_table([(s.name, s.overall) for s in report.setups], ks, "set-up"),
        "<div class=scroll><table><thead><tr><th>set-up</th><th>index</th><th>settings</th>"
        "<th>p50 ms</th><th>p95 ms</th><th>total s</th><th>failed</th></tr></thead><tbody>",
    ]
    for s in report.setups:
        settings = ", ".join(f"{k}={v}" for k, v in s.settings.items() if k != "index")
        body.append(
            f"<tr><td>{escape(s.name)}</td><td class=l>{escape(s.index)}</td>"
            f"<td class=l>{escape(settings) or 'defaults'}</td><td>{s.latency.p50_ms:.1f}</td>"
            f"<td>{s.latency.p95_ms:.1f}</td><td>{s.seconds:.2f}</td><td>{s.failed}</td></tr>"
        )
    body.append("</tbody></table></div>")
    body += ["<h2>Facet recall at k</h2>", _chart(report), "<h2>By kind</h2>"]
    for s in report.setups:
        body.append(f"<h3>{escape(s.name)}</h3>")
        body.append(_scores_table(list(s.by_kind.items()), ks, "kind"))
    if report.differences:
        names = [s.name for s in report.setups]
        body.append(f"<h2>Differences at k={max(ks)}</h2><div class=scroll><table><thead><tr>"
                    "<th>question</th><th>facet</th>"
                    + "".join(f"<th>{escape(n)}</th>" for n in names)
                    + "</tr></thead><tbody>")
        for d in report.differences:
            cells = "".join(
                "<td class=miss>missed</td>" if d.ranks.get(n) is None
                else f"<td class=hit>#{d.ranks[n]}</td>" for n in names
            )
            body.append(
                f"<tr><td class=q>{escape(d.question_id)}: {escape(d.question)}</td>"
                f"<td>{escape(d.facet)}</td>{cells}</tr>"
            )
        body.append("</tbody></table></div>")
    if report.warnings:
        body.append("<h2>Warnings</h2><ul>")
        body.extend(f"<li class=warn>{escape(w)}</li>" for w in report.warnings)
        body.append("</ul>")
    body.append("<h2>Questions</h2>")
    body.extend(_questions_table(s) for s in report.setups)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>ragloom eval: {escape(report.questions_file)}</title><style>{_STYLE}</style>"
        f"</head><body>{''.join(body)}</body></html>\n"
    )
