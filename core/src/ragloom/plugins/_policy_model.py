"""The pydantic model of a policy file's settings (imported only when there is a policy)."""

from __future__ import annotations

import builtins
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..config._policy_spec import PolicySpec
from ..kinds import KINDS

__all__ = ["PolicyModel"]


class PolicyModel(BaseModel):
    """``allow-plugins``, ``block-plugins``, ``require-wrappers`` and ``default-policy``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)

    allow_plugins: list[str] | None = Field(default=None, alias="allow-plugins")
    block_plugins: list[str] = Field(default_factory=list, alias="block-plugins")
    require_wrappers: list[str] = Field(default_factory=list, alias="require-wrappers")
    default_policy: dict[str, PolicySpec] = Field(default_factory=dict, alias="default-policy")

    @field_validator("default_policy")
    @classmethod
    def _known_kinds(cls, value: dict[str, PolicySpec]) -> dict[str, PolicySpec]:
        kinds = known_kinds()
        for kind in value:
            if kind not in kinds:
                raise ValueError(f"unknown kind {kind!r} (kinds: {', '.join(kinds)})")
        return value

    @field_validator("allow_plugins", "block_plugins", "require_wrappers")
    @classmethod
    def _names(cls, value: list[str] | None) -> list[str] | None:
        for name in value or ():
            if not name.strip():
                raise ValueError("a distribution name is empty")
        return value

    def policies(self) -> dict[str, Any]:
        """kind -> :class:`~ragloom.policy.Policy` (``retry_on`` names made exception types).

        Raises:
            ValueError: an unknown exception name.
        """
        from .. import errors as ragloom_errors
        from ..policy import Policy

        out: dict[str, Any] = {}
        for kind, spec in self.default_policy.items():
            values = spec.model_dump(exclude_none=True)
            if "retry_on" in values:
                types = []
                for name in values["retry_on"]:
                    found = getattr(ragloom_errors, name, None) or getattr(builtins, name, None)
                    if not (isinstance(found, type) and issubclass(found, BaseException)):
                        raise ValueError(
                            f"{kind}.retry_on: unknown exception {name!r}; use a builtin "
                            "exception (e.g. TimeoutError) or a ragloom error name"
                        )
                    types.append(found)
                values["retry_on"] = tuple(types)
            out[kind] = Policy(**values)
        return out


def known_kinds() -> list[str]:
    """The kinds a default policy may be given for."""
    return [name for name in KINDS if name != "command"]
