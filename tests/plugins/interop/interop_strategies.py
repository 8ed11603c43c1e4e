"""Hypothesis strategies: ragloom documents, whole or chunks, with the fields a conversion keeps."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from ragloom import Document

# Metadata keys stay clear of the names the adapters use for lineage ("parent_id",
# "start_index", "source_id", "chunk_index", "content_format" ...).
_keys = st.text(min_size=1, max_size=8).map(lambda s: f"m_{s}")
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**31), 2**31)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = _scalars | st.lists(_scalars, max_size=3)
_embeddings = st.none() | st.lists(
    st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=6
)

# The keys loaders record that tell a format: conversions must keep the format exact with them.
_hints = st.fixed_dictionaries(
    {},
    optional={
        "file_type": st.sampled_from(["text/markdown", "text/plain", "application/json"]),
        "file_path": st.sampled_from(["a/notes.md", "b.txt", "c.py", "d.rst"]),
        "mime_type": st.sampled_from(["text/html", "text/x-python"]),
    },
)


def _with_hints() -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(st.dictionaries(_keys, _values, max_size=2), _hints).map(
        lambda pair: {**pair[0], **pair[1]}
    )


@st.composite
def ragloom_documents(draw: Any) -> Document:
    content = draw(st.text(max_size=60))
    fields: dict[str, Any] = {
        "id": draw(st.text(min_size=1, max_size=12)),
        "content": content,
        "content_format": draw(st.sampled_from(["text", "markdown", "code", "custom-fmt"])),
        "metadata": draw(st.dictionaries(_keys, _values, max_size=4) | _with_hints()),
        "embedding": draw(_embeddings),
    }
    if draw(st.booleans()):
        fields["parent_id"] = draw(st.text(min_size=1, max_size=12))
        fields["index"] = draw(st.none() | st.integers(0, 10_000))
        start = draw(st.none() | st.integers(0, 10_000))
        if start is not None:
            fields["start"], fields["end"] = start, start + len(content)
    return Document(**fields)
