"""An enterprise-style plugin for the end-to-end tests: an audit log of every event, a wrapper
around every item call, policy defaults per kind, and a step before every query block.

Everything it sees goes to the JSON Lines file named by ``$E2E_AUDIT_LOG`` (nothing when unset).
"""

from __future__ import annotations

import json
import os

from ragloom.plugins.hookspecs import hookimpl


def _log(record: dict) -> None:
    path = os.environ.get("E2E_AUDIT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


@hookimpl
def ragloom_event(event):
    _log({"hook": "event", "kind": event.kind})


@hookimpl
async def ragloom_event_async(event):
    if event.kind == "run_finished":
        _log({"hook": "event_async", "kind": event.kind})


@hookimpl
def ragloom_default_policy(kind, step):
    from ragloom import Policy

    if kind == "chunker":
        return Policy(max_attempts=4, concurrency=2)
    return None


@hookimpl
def ragloom_wrap_step(step, call, is_async):
    name = step.name
    if is_async:

        async def wrapped(item):
            _log({"hook": "wrap", "step": name})
            return await call(item)

    else:

        def wrapped(item):
            _log({"hook": "wrap", "step": name})
            return call(item)

    return wrapped


@hookimpl
def ragloom_query_steps(stage, block):
    if stage != "before":
        return None
    from ragloom import FunctionStep

    def audit_question(question):
        _log({"hook": "question", "text": question})
        return question

    return [FunctionStep(audit_question, name="AuditQuestion")]
