"""Definition lists read from markdown: a term line and the text that defines it."""

from __future__ import annotations

from windowpack.summarizer.definitions import definitions, term_name


def _read(text: str) -> list[tuple[str, str]]:
    return [
        (text[d.term.start : d.term.end], text[d.body.start : d.body.end])
        for d in definitions(text, 0, len(text))
    ]


def test_html2text_definition_lists_are_terms_and_definitions() -> None:
    text = (
        "### 20.4.1. Memory\n\n"
        "`shared_buffers` (`integer`) \n    \n\n"
        "Sets the amount of memory. The default is 128MB. \n\n"
        "More about it. \n\n"
        "`work_mem` (`integer`) \n    \n\n"
        "Sets the memory of a sort. \n"
    )
    assert _read(text) == [
        (
            "`shared_buffers` (`integer`)",
            "Sets the amount of memory. The default is 128MB. \n\nMore about it.",
        ),
        ("`work_mem` (`integer`)", "Sets the memory of a sort."),
    ]


def test_pandoc_and_rst_definitions_are_read_too() -> None:
    pandoc = "Intro.\n\nmax_size\n: The largest size allowed.\n\nmin_size\n\n:   The smallest.\n"
    assert _read(pandoc) == [
        ("max_size", "The largest size allowed."),
        ("min_size", "The smallest."),
    ]
    rst = "Options\n\nverbose\n    Print every step taken by the tool.\n"
    assert _read(rst) == [("verbose", "Print every step taken by the tool.")]


def test_bare_terms_count_only_where_they_repeat() -> None:
    one = "Some text here.\n\n`alpha`\n\nAlpha does things for you.\n"
    assert _read(one) == []
    two = one + "\n`beta`\n\nBeta does other things for you.\n"
    assert [term for term, _ in _read(two)] == ["`alpha`", "`beta`"]


def test_code_blocks_tables_headings_and_lead_ins_are_not_terms() -> None:
    text = (
        "## Synopsis\n    \n    \n    DROP DATABASE [ IF EXISTS ] _name_\n    \n\n"
        "To abort all changes: \n    \n    \n    ABORT;\n    \n\n"
        "**Table 4.1. Escapes**\n\nSequence| Meaning\n---|---\n`\\b`| backspace\n\n"
        "### Note\n    \n\nA note about it.\n"
    )
    assert _read(text) == []


def test_a_term_name_drops_its_type() -> None:
    assert term_name("`work_mem` (`integer`)") == "`work_mem`"
    assert term_name("_`name`_") == "_`name`_"
    assert term_name("`IF  EXISTS`") == "`IF EXISTS`"
