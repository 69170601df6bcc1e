"""The design debate's word splitters and suffix stripper (protocol/design/words.py)."""

from __future__ import annotations

from debatecode.protocol.design.words import ascii_words, split_words, strip_suffix


def test_split_words_joins_apostrophes_and_keeps_any_script() -> None:
    assert split_words("We're caching: the Café’s cache_size!") == ["were", "caching", "the", "cafés", "cache", "size"]
    assert split_words("") == []


def test_ascii_words_splits_at_everything_but_ascii_letters_and_digits() -> None:
    assert ascii_words("We're caching: the Café’s cache_size v2!") == [
        "we",
        "re",
        "caching",
        "the",
        "caf",
        "s",
        "cache",
        "size",
        "v2",
    ]


def test_strip_suffix_takes_one_suffix_off_and_keeps_three_letters() -> None:
    suffixes = ("ings", "ing", "ies", "ied", "es", "s")
    assert strip_suffix("caching", suffixes) == "cach"
    assert strip_suffix("libraries", suffixes) == "library"
    assert strip_suffix("copied", suffixes) == "copy"
    assert strip_suffix("class", suffixes) == "class", "a plural s never comes off ss"
    assert strip_suffix("bus", suffixes) == "bus", "three letters must stay"
    assert strip_suffix("copied", ("ies",)) == "copied", "only the suffixes given"
