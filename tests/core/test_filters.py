"""Filters: composition, requires_content, ContentFormatFilter, MetadataFilter."""

from __future__ import annotations

import pytest
from ragloom import (
    ConfigurationError,
    ContentFormat,
    ContentFormatFilter,
    Document,
    Filter,
    MetadataFilter,
    PredicateFilter,
)


def doc(fmt: str = "text", content: str = "body", **metadata: object) -> Document:
    return Document(id="d", content=content, content_format=fmt, metadata=metadata)


MD = ContentFormatFilter(include_formats=["markdown"])
EN = MetadataFilter(lang="en")
LONG = PredicateFilter(lambda d: len(d.content) > 5)


@pytest.mark.parametrize(
    ("fmt", "lang", "content", "expected_and", "expected_or"),
    [
        ("markdown", "en", "x", True, True),
        ("markdown", "fr", "x", False, True),
        ("html", "en", "x", False, True),
        ("html", "fr", "x", False, False),
    ],
)
def test_and_or(fmt: str, lang: str, content: str, expected_and: bool, expected_or: bool) -> None:
    item = doc(fmt, content, lang=lang)
    assert (MD & EN).matches(item) is expected_and
    assert (MD | EN).matches(item) is expected_or
    assert (MD & EN)(item) is expected_and  # filters are callable


def test_not_and_nesting() -> None:
    item = doc("html", "a long body", lang="fr")
    assert (~MD).matches(item)
    assert not (~~MD).matches(item)
    assert ((~MD & ~EN) | LONG).matches(item)
    assert not (MD | (EN & LONG)).matches(item)
    assert isinstance(MD & EN & LONG, Filter)


def test_requires_content_propagates_through_composition() -> None:
    assert MD.requires_content is False
    assert EN.requires_content is False
    assert LONG.requires_content is True
    assert (MD & EN).requires_content is False
    assert (MD | ~EN).requires_content is False
    assert (MD & LONG).requires_content is True
    assert (MD | LONG).requires_content is True
    assert (~LONG).requires_content is True
    assert PredicateFilter(lambda d: True, requires_content=False).requires_content is False


def test_content_format_include_exclude_with_custom_strings() -> None:
    docling = ContentFormatFilter(include_formats=["docling", "x-my-format"])
    assert docling.matches(doc("docling"))
    assert docling.matches(doc("X-My-Format"))  # formats compare normalised
    assert not docling.matches(doc("markdown"))

    not_html = ContentFormatFilter(exclude_formats=["html", "x-weird"])
    assert not_html.matches(doc("markdown"))
    assert not not_html.matches(doc("html"))
    assert not not_html.matches(doc("x-weird"))

    both = ContentFormatFilter(include_formats=["markdown", "rst"], exclude_formats=["rst"])
    assert both.matches(doc("markdown"))
    assert not both.matches(doc("rst"))

    enum_member = ContentFormatFilter(include_formats=[ContentFormat.MARKDOWN])
    assert enum_member.matches(doc("markdown"))
    assert ContentFormatFilter(include_formats="html").matches(doc("html"))


def test_content_format_filter_rejects_bad_parameters() -> None:
    with pytest.raises(ConfigurationError):
        ContentFormatFilter()
    with pytest.raises(ValueError, match="include_formats"):
        ContentFormatFilter(include_formats=[""])
    with pytest.raises(ValueError, match="exclude_formats"):
        ContentFormatFilter(exclude_formats=[3])  # type: ignore[list-item]


def test_metadata_filter() -> None:
    item = doc(lang="en", source={"kind": "web", "host": "x.org"}, year=2024)
    assert MetadataFilter(lang="en").matches(item)
    assert not MetadataFilter(lang="fr").matches(item)
    assert MetadataFilter(lang=["fr", "en"]).matches(item)  # one of
    assert MetadataFilter(year=...).matches(item)  # present
    assert not MetadataFilter(missing=...).matches(item)
    assert MetadataFilter({"source.kind": "web"}).matches(item)  # dotted keys
    assert not MetadataFilter({"source.kind": "pdf"}).matches(item)
    assert not MetadataFilter({"lang.deep": "x"}).matches(item)
    assert MetadataFilter({"lang": "en"}, year=2024).matches(item)  # all conditions
    assert not MetadataFilter({"lang": "en"}, year=1999).matches(item)
    with pytest.raises(ConfigurationError):
        MetadataFilter()


def test_filters_describe_themselves() -> None:
    described = (MD & ~EN).describe()
    assert described["filter"] == "AllOf"
    assert described["all"][0] == {"filter": "ContentFormatFilter", "include_formats": ["markdown"]}
    assert described["all"][1]["not"]["conditions"] == {"lang": "en"}


# -- format names: aliases, custom formats, mistakes ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("md", "markdown"), ("MD", "markdown"), (" mkd ", "markdown"),
        ("text/markdown", "markdown"),
        ("htm", "html"), ("xhtml", "html"), ("text/html", "html"),
        ("txt", "text"), ("plain", "text"), ("text/plain", "text"),
        ("rest", "rst"), ("reStructuredText", "rst"), ("application/json", "json"),
    ],
)
def test_common_names_of_a_format_are_that_format(name: str, canonical: str) -> None:
    flt = ContentFormatFilter(include_formats=[name])
    assert flt.config() == {"include_formats": [canonical]}
    assert flt.matches(doc(canonical))
    # A document declared with the same name has the same format.
    assert flt.matches(doc(name)) and doc(name).content_format == canonical


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("markdwon", "'markdown'"), ("htlm", "'html'"), ("jsno", "'json'"), ("txet", "'text'")],
)
def test_a_misspelt_format_is_refused_with_did_you_mean(name: str, suggestion: str) -> None:
    for key in ("include_formats", "exclude_formats"):
        with pytest.raises(ConfigurationError) as info:
            ContentFormatFilter(**{key: ["markdown", name]})
        message = str(info.value)
        assert f"ContentFormatFilter.{key}: unknown content format {name!r}" in message
        assert f"did you mean {suggestion}" in message
        assert "'x-'" in message  # how to name a format of one's own


def test_a_language_is_not_a_format_and_the_message_says_how_to_match_it() -> None:
    for name, language in (("python", "python"), ("py", "python"), ("rust", "rust")):
        with pytest.raises(ConfigurationError, match=rf"MetadataFilter\(language='{language}'\)"):
            ContentFormatFilter(include_formats=[name])
    code = ContentFormatFilter(include_formats=["code"]) & MetadataFilter(language="python")
    assert code.matches(doc("code", language="python"))
    assert not code.matches(doc("code", language="rust"))


def test_formats_produced_by_an_installed_loader_are_known(tmp_path, monkeypatch) -> None:
    """A third-party loader producing a format of its own makes that name valid in filters."""
    import importlib
    import sys

    (tmp_path / "rb_legal.py").write_text(
        "from ragloom import Loader, Document\n"
        "class LegalLoader(Loader):\n"
        "    suffixes = frozenset({'.legal'})\n"
        "    produces = frozenset({'legal-contract'})\n"
        "    def load(self, source):\n"
        "        return [Document(id=source.doc_id, content='x',\n"
        "                         content_format='legal-contract')]\n",
        encoding="utf-8",
    )
    info = tmp_path / "rb_legal-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rb-legal\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ragloom.loaders]\nlegal = rb_legal:LegalLoader\n")
    from ragloom.plugins._discovery import refresh_installed

    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    refresh_installed()
    try:
        with pytest.raises(ConfigurationError, match="did you mean 'legal-contract'"):
            ContentFormatFilter(include_formats=["legal-contrat"])
        assert ContentFormatFilter(include_formats=["Legal-Contract"]).matches(
            doc("legal-contract")
        )
    finally:
        monkeypatch.undo()
        sys.modules.pop("rb_legal", None)
        refresh_installed()
    with pytest.raises(ConfigurationError, match="unknown content format 'legal-contract'"):
        ContentFormatFilter(include_formats=["legal-contract"])
