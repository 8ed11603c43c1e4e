"""A component's identity covers its class's code, and objects by all of their state.

Properties (hypothesis): the same source gives the same identity, an edit of a method's body,
of a class attribute a method reads or of a helper (a method, a base class, a module-level
function) gives another; objects whose state Python cannot see directly (a
``tokenizers.Tokenizer``, a ``functools.partial``, a callable object, a native object)
are identified by that state, or not at all, never by their class alone.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import textwrap
import threading
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom import CacheSkipped, Document, FunctionStep, MemoryCacheStore, Pipeline
from ragloom.identity import Uncacheable, canonical_identity, class_code
from ragloom.step import PipelineStep

SOURCE = '''
from ragloom import Document, PipelineStep

def helper(text):
    return text[:{helper}]

class Base(PipelineStep[Document]):
    def shape(self, text):
        return text[:{base}]

class Step(Base):
    step_id = "tests/code-identity"
    WIDTH = {width}
    cache_window = {window}
    calls = 0

    def cut(self, text):
        return text[:{method}]

    def transform(self, item):
        type(self).calls += 1
        out = [self.cut(item.content), self.shape(item.content), helper(item.content),
               item.content[: self.WIDTH], {body}]
        return item.model_copy(update={{"metadata": {{"out": out}}}})
'''

KNOBS = ("helper", "base", "width", "method", "body")
small = st.integers(min_value=0, max_value=50)


def _load(**values: int) -> type[Any]:
    """``Step`` from SOURCE with these values, in a fresh module of one fixed name (as a new
    process importing an edited file would see it)."""
    settings_ = {"helper": 1, "base": 2, "width": 3, "method": 4, "body": 5, "window": 256}
    settings_.update(values)
    module = types.ModuleType("code_identity_steps")
    sys.modules["code_identity_steps"] = module
    try:
        exec(compile(SOURCE.format(**settings_), "code_identity_steps.py", "exec"),
             module.__dict__)
    finally:
        del sys.modules["code_identity_steps"]
    return module.Step  # type: ignore[no-any-return]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(KNOBS), small, small)
def test_an_edit_of_the_code_changes_the_identity_and_only_an_edit(
    knob: str, before: int, after: int
) -> None:
    old, new = _load(**{knob: before}), _load(**{knob: after})
    assert old is not new
    assert (old().config_hash == new().config_hash) == (before == after)


@settings(max_examples=10, deadline=None)
@given(small, small)
def test_class_attributes_no_method_reads_and_state_they_write_are_left_out(
    window: int, calls: int
) -> None:
    step = _load()
    before = step().config_hash
    assert _load(window=window + 1)().config_hash == before  # cache_window: how, not what
    step.calls = calls  # a counter the class's own methods assign: state, not code
    assert step().config_hash == before


def test_line_numbers_and_file_names_are_not_code() -> None:
    step = _load()
    module = types.ModuleType("code_identity_steps")
    sys.modules["code_identity_steps"] = module
    try:
        shifted = "\n\n# a comment above\n" + SOURCE.format(
            helper=1, base=2, width=3, method=4, body=5, window=256
        )
        exec(compile(shifted, "elsewhere/code_identity_steps.py", "exec"), module.__dict__)
    finally:
        del sys.modules["code_identity_steps"]
    assert module.Step().config_hash == step().config_hash


def test_ragloom_core_classes_are_left_out_and_user_bases_kept_in() -> None:
    assert class_code(PipelineStep) is None and class_code(FunctionStep) is None
    step = _load()
    own = class_code(step)
    assert own is not None and own != class_code(step.__mro__[1])  # Base has its own


def test_a_class_attribute_without_identity_that_a_method_reads_is_named() -> None:
    class Locked(PipelineStep[Document]):
        GUARD = threading.Lock()

        def transform(self, item: Document) -> Document:
            with self.GUARD:
                return item

    with pytest.raises(Uncacheable, match="class attribute 'GUARD'"):
        _ = Locked().config_hash
    assert Locked().configure(cache_version=1).config_hash  # the version stands in for it


# -- objects whose state Python cannot see ---------------------------------------------------

vocabularies = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=4), st.just(0), min_size=1, max_size=6
)


def _tokenizer(words: dict[str, int]) -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {word: i for i, word in enumerate(sorted(words))}
    vocab["[UNK]"] = len(vocab)
    tokenizer = tokenizers.Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    return tokenizer


def _captured(tokenizer: Any) -> Any:
    def length(text: str) -> int:  # the words the tokenizer knows
        return sum(token != "[UNK]" for token in tokenizer.encode(text).tokens)

    return length


@settings(max_examples=25, deadline=None)
@given(vocabularies, vocabularies)
def test_a_tokenizer_in_a_closure_counts_by_its_vocabulary(
    one: dict[str, int], other: dict[str, int]
) -> None:
    a, b = _tokenizer(one), _tokenizer(other)
    same = a.to_str() == b.to_str()
    assert (canonical_identity(_captured(a)) == canonical_identity(_captured(b))) == same
    assert (canonical_identity(a.encode) == canonical_identity(b.encode)) == same
    assert canonical_identity(a) == canonical_identity(_tokenizer(one))  # equal state: equal


def _scale(text: str, factor: int, *, offset: int = 0) -> int:
    return len(text) * factor + offset


class Scaler:
    """A callable object: its identity is its state and its code."""

    def __init__(self, factor: int) -> None:
        self.factor = factor

    def __call__(self, text: str) -> int:
        return len(text) * self.factor


values = st.integers(min_value=-5, max_value=5)


@settings(max_examples=40, deadline=None)
@given(values, values, values, values)
def test_partials_and_callable_objects_count_by_their_state(
    f1: int, f2: int, o1: int, o2: int
) -> None:
    one = canonical_identity(functools.partial(_scale, factor=f1, offset=o1))
    two = canonical_identity(functools.partial(_scale, factor=f2, offset=o2))
    assert (one == two) == ((f1, o1) == (f2, o2))
    positional = canonical_identity(functools.partial(_scale, "x", f1))
    assert (positional == canonical_identity(functools.partial(_scale, "x", f2))) == (f1 == f2)
    assert (canonical_identity(Scaler(f1)) == canonical_identity(Scaler(f2))) == (f1 == f2)
    # A partial of a tokenizer's method, or of a callable object: their state counts too.
    bound = canonical_identity(functools.partial(Scaler(f1), "x"))
    assert (bound == canonical_identity(functools.partial(Scaler(f2), "x"))) == (f1 == f2)


def test_objects_that_only_pickle_knows_count_by_what_they_pickle() -> None:
    import operator
    import re

    assert canonical_identity(operator.itemgetter(1)) != canonical_identity(operator.itemgetter(2))
    assert canonical_identity(re.compile("a+")) != canonical_identity(re.compile("b+"))
    assert canonical_identity(re.compile("a+")) == canonical_identity(re.compile("a+"))


def test_native_state_that_cannot_be_serialised_has_no_identity() -> None:
    for hidden in (hashlib.sha256(b"one"), threading.Lock()):
        with pytest.raises(Uncacheable, match="has no stable identity"):
            canonical_identity(hidden, "parameter 'x'")


class Digest(PipelineStep[Document]):
    step_id = "tests/digest-step"

    def __init__(self, hasher: Any) -> None:
        super().__init__()
        self.hasher = hasher

    def transform(self, item: Document) -> Document:
        h = self.hasher.copy()
        h.update(item.content.encode())
        return item.model_copy(update={"metadata": {"digest": h.hexdigest()}})


def test_a_step_holding_native_state_runs_uncached_and_says_so() -> None:
    store = MemoryCacheStore()
    docs = [Document(id=f"d{i}", content=f"text {i}") for i in range(3)]
    outputs = []
    for seed in (b"one", b"two"):
        skipped: list[CacheSkipped] = []
        pipeline = Pipeline(Digest(hashlib.sha256(seed)), cache=store)
        pipeline.subscribe(lambda e, s=skipped: s.append(e) if isinstance(e, CacheSkipped) else 0)
        result = pipeline.run_sync(docs)
        assert result.cache_hits == 0 and store.info().entries == 0
        assert skipped and "parameter 'hasher'" in skipped[0].reason
        outputs.append([d.metadata["digest"] for d in result])
    assert outputs[0] != outputs[1]  # the second run was not served the first's outputs


def test_a_tokenizer_in_a_function_step_is_never_replayed_for_another() -> None:
    pytest.importorskip("tokenizers")
    store = MemoryCacheStore()
    docs = [Document(id=f"d{i}", content="ab cd ef " * (i + 1)) for i in range(4)]

    def run(words: dict[str, int]) -> tuple[list[Any], int]:
        length = _captured(_tokenizer(words))

        def count(item: Document) -> Document:
            return item.model_copy(update={"metadata": {"tokens": length(item.content)}})

        step = FunctionStep(count, output_model=Document).configure(cache_mode="always")
        result = Pipeline(step, cache=store).run_sync(docs)
        return [d.metadata["tokens"] for d in result], result.cache_hits

    first, hits = run({"ab": 0})
    assert hits == 0
    assert run({"ab": 0}) == (first, len(docs))  # the same tokenizer: replayed
    second, hits = run({"ab": 0, "cd": 0, "ef": 0})
    assert hits == 0 and second != first  # another vocabulary: computed again


def test_code_digests_do_not_depend_on_the_hash_seed(tmp_path: Any) -> None:
    import subprocess

    script = tmp_path / "seeded.py"
    script.write_text(textwrap.dedent('''
        from ragloom.identity import code_digest
        KINDS = frozenset({"alpha", "beta", "gamma", "delta"})
        def f(x):
            return x in {"alpha", "beta", "gamma", "delta"} or x in KINDS
        print(code_digest(f))
    '''))
    digests = {
        subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                       env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1
