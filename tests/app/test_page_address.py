"""Issue 40 §1, §4: property tests over the page address, with the fuzz's promises (tests/safety): every key,
hostile values and sizes give a page that opens, at most one message line naming the address's part, no
traceback, no raw control or bidi character, in bounded time and memory; the numbers are read by the command
line's own types; an address never starts a run."""
import resource
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")

from wargame_odds.analysis.app import QUERY_KEYS, app  # noqa: E402
from wargame_odds.analysis.app.page import MAX_PAGE_SEED, PRESS_RUN, Page  # noqa: E402
from wargame_odds.analysis.app.setups import encode_setup, example_setup  # noqa: E402
from wargame_odds.analysis.intake.errors import ArgumentError  # noqa: E402
from wargame_odds.analysis.intake.run_limits import MAX_TRIALS  # noqa: E402

MAX_SECONDS = 30  # one page, on a busy machine
MAX_RSS_KIB = 4 * 1024 * 1024
RAW = ("\x1b", "\x07", "\u202e", "\x00")
SETTINGS = dict(derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

#: Digits that are no ASCII digits (str.isdigit accepts them; int() reads some), and other number-like text.
ODD_DIGITS = ["²", "³¹", "٣", "٣٤٥", "१२", "①", "1_000", " 12 ", "+5", "-0", "0x10", "1e3", "1.0", "", "\x00",
              "9" * 4301, "1" + "0" * 5000, "nan", "inf", "-inf", "1e308", "0.4999999", "50", "51", "0"]
HOSTILE = ["\x1b[2J", "\x1b]0;pwned\x07", "a\u202eb", '=HYPERLINK("http://evil","x")', "<script>x</script>",
           "$\\alpha$", "two\nlines", "../../etc/passwd", "/etc/passwd", "epic/" + "a" * 10_000,
           "epic/" + "a" * 300, "[" * 5000, "{" * 5000, "\x1f" * 1000, "x" * 100_000]
VALUES = st.one_of(st.sampled_from(ODD_DIGITS + HOSTILE),
                   st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=60),
                   st.text(max_size=200),
                   st.integers(-10**30, 10**30).map(str))
SETUP = encode_setup(example_setup("t9a/three_chargers"))
KEYS = st.sampled_from([*QUERY_KEYS, "unknown", "x" * 300])


def _open(query: dict) -> Page:
    """A page built from ``query`` (as the server builds one), checked against the fuzz's promises."""
    start = time.monotonic()
    page = Page(query, in_notebook=True)
    took = time.monotonic() - start
    message = page.message.object
    assert "Traceback" not in message and "internal error" not in message, (query, message)
    assert message.count('class="wo-error"') <= 1 and "\n" not in message and len(message) < 2500, (query, message)
    for raw in RAW:
        assert raw not in message and raw not in page.status.object, (query, raw)
    assert page.running is None  # nothing runs until the player presses Run
    assert 1 <= page.trials.value <= MAX_TRIALS and 0 <= page.seed.value <= MAX_PAGE_SEED
    assert page.precision.value is None or 0 < page.precision.value <= 0.5  # 50 percentage points allowed
    assert took < MAX_SECONDS, query
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MAX_RSS_KIB
    return page


@settings(max_examples=60, **SETTINGS)
@given(query=st.dictionaries(KEYS, VALUES, max_size=4))
def test_any_address_opens_the_page_with_at_most_one_message(query):
    _open(query)


@settings(max_examples=40, **SETTINGS)
@given(key=st.sampled_from(["trials", "seed", "precision"]), value=st.sampled_from(ODD_DIGITS) | VALUES)
def test_a_number_of_the_address_is_read_as_the_command_line_reads_it(key, value):
    """Accepted exactly when the command line's type accepts it; a refusal is one message naming the key."""
    import click

    from wargame_odds.analysis.cli import PrecisionValue

    kind = {"trials": click.IntRange(1, MAX_TRIALS), "seed": click.IntRange(0, MAX_PAGE_SEED),
            "precision": PrecisionValue()}[key]
    try:
        expected = kind.convert(value, None, None) if len(value) <= 40 else None
    except click.BadParameter:
        expected = None
    page = _open({"example": "gdb/column_vs_line", key: value})
    if expected is None:
        assert page.message.object.startswith(f'<div class="wo-error">the page address: field &#x27;{key}&#x27;')
    else:
        assert page.message.object == "" and getattr(page, key).value == expected


@settings(max_examples=25, **SETTINGS)
@given(labels=VALUES, side=VALUES, tab=st.sampled_from(["compare", "epic", "gdb", "t9a", "x"]))
def test_a_comparison_address_with_hostile_labels_and_sides(labels, side, tab):
    page = _open({"tab": tab, "a": SETUP, "b": SETUP, "labels": labels, "side": side})
    if tab == "compare" and page.message.object == "":  # (two scenarios of T9A are no Epic options: a message)
        assert all(len(label.value) <= 80 for label in page.tabs["compare"].labels)


@pytest.mark.parametrize("value", ["²", "1" + "0" * 5000, "٣¹"])
def test_the_issues_digits_give_one_message(value):
    page = _open({"example": "epic/assault_marines_vs_warband", "trials": value})
    assert "the page address: field &#x27;trials&#x27;" in page.message.object
    assert "Assault Detachment" in str(page.tabs["epic"].valid.data)


def test_run_in_the_address_starts_nothing_and_says_press_run():
    page = _open({"example": "gdb/column_vs_line", "run": "1", "trials": "2000"})
    assert page.running is None and PRESS_RUN in page.status.object


@pytest.mark.parametrize("query", [{"trials": 5}, {"trials": 2000.0}, {"seed": 7, "example": "gdb/column_vs_line"},
                                   {"trials": [1]}, {"trials": None}, {"trials": True}])
def test_the_notebook_app_takes_numbers_and_says_one_line_for_other_values(query):
    """``wo.app({"trials": 5})`` was an AttributeError."""
    layout = app(query)
    page_message = layout.objects[1].object
    value = next(iter(query.values()))
    if isinstance(value, int) and not isinstance(value, bool):  # 2000.0 is no whole number, as on the command line
        assert page_message == ""
    else:
        assert page_message.startswith('<div class="wo-error">the page address: field &#x27;trials&#x27;')


def test_the_notebook_app_refuses_a_query_that_is_no_dict():
    with pytest.raises(ArgumentError, match="query must be"):
        app("example=gdb/column_vs_line")


def test_a_compared_options_name_is_capped_whatever_sends_it():
    """The Compare tab's boxes hold 80 characters; a longer name sent past them (a crafted message) is refused
    when the run is asked for, as it is in an address."""
    from wargame_odds.analysis.intake.errors import UserError

    page = _open({"example": "epic/decisions/shoot_first_or_engage_now"})
    compare = page.tabs["compare"]
    compare.labels[0].value = "x" * 81
    with pytest.raises(UserError, match="at most 80 characters"):
        compare.work(2000, 0, None)
    long = _open({"tab": "compare", "a": encode_setup(example_setup("epic/assault_marines_vs_warband")),
                  "b": encode_setup(example_setup("epic/assault_marines_vs_warband")), "labels": "y" * 81 + "\x1fz"})
    assert "at most 80 characters" in long.message.object
