"""The audit plugin's organisation policy: imported before discovery, alone (it sits outside the
``e2e_audit`` package, so nothing else of the plugin is imported with it)."""

from __future__ import annotations

from ragloom.plugins.hookspecs import hookimpl


@hookimpl
def ragloom_policy():
    return {"default-policy": {"chunker": {"timeout": 30.0}}}
