"""``ragloom audit-report``: a command the audit plugin adds (imported only when it runs)."""

from __future__ import annotations

import collections
import json
import os

import click

from . import _log

_log({"hook": "import", "module": "commands"})


@click.command("audit-report")
@click.option("--hook", default="wrap", show_default=True, help="Which records to count.")
def audit_report(hook):
    """Count the audit log's records by step."""
    path = os.environ.get("E2E_AUDIT_LOG", "")
    counts = collections.Counter()
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                if record["hook"] == hook:
                    counts[record.get("step", "?")] += 1
    for step, count in sorted(counts.items()):
        click.echo(f"{step}: {count}")
    return 0 if counts else 1
