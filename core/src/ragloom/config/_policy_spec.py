"""The policy fields of a pipeline file and of an organisation's policy file.

Apart from the rest of the pipeline file's schema so that the plugin registry, which reads the
organisation's policy file before any plugin is imported, does not import the query blocks
(the schema's defaults come from them).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["PolicySpec"]


class PolicySpec(BaseModel):
    """Fields of :class:`~ragloom.policy.Policy`; any left out are inherited. The rules on each
    field are the policy's own (checked by building one)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)

    max_attempts: int | None = None
    backoff: float | None = None
    backoff_multiplier: float | None = None
    backoff_max: float | None = None
    jitter: float | None = None
    retry_on: list[str] | None = Field(
        default=None,
        description="Exception names: builtins (e.g. TimeoutError) or ragloom errors.",
    )
    timeout: float | None = Field(default=None, description="Seconds per item attempt.")
    concurrency: int | None = None
    on_failure: Literal["emit", "abort"] | None = None

    @model_validator(mode="after")
    def _valid_policy(self) -> PolicySpec:
        from ..policy import Policy

        Policy(**self.model_dump(exclude_none=True, exclude={"retry_on"}))
        return self
