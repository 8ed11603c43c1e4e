"""``ragloom._hints.did_you_mean``: the one hint of every "unknown name" message."""

from __future__ import annotations

import pytest
from ragloom import ConfigurationError
from ragloom._hints import did_you_mean
from ragloom.searcher import SearchSettings, settings_from


def test_the_hint_names_the_close_choices_or_nothing() -> None:
    keys = ["name", "keywords", "description"]
    assert did_you_mean("nmae", keys) == " (did you mean 'name'?)"
    assert did_you_mean("nmae", keys, form="; {}") == "; did you mean 'name'?"
    assert did_you_mean("zzz", keys) == ""
    assert did_you_mean("mode", ["mode", "model", "modes"], n=2) == (
        " (did you mean 'mode' or 'modes'?)"
    )


def test_aliases_suggest_the_name_they_stand_for_once() -> None:
    names = {"markdown": "markdown", "md": "markdown", "markdwn": "markdown", "text": "text"}
    assert did_you_mean("markdon", names, n=3) == " (did you mean 'markdown'?)"


def test_a_search_setting_misspelt_is_named_with_its_closest_key() -> None:
    message = r"unknown search setting 'mood' \(did you mean 'mode'\?\); known: "
    with pytest.raises(ConfigurationError, match=message):
        settings_from({"mood": "text"}, SearchSettings())
