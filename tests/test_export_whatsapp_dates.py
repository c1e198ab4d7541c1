"""WhatsApp date orders: every header layout a peer parser publishes (whatstk lists 96 —
day/month/year, month/day/year, year/month/day and year/day/month, each with ``-``, ``/`` or
``.``, Android's ``d, t - Name:`` and iOS's ``[d t] Name:``, 24 h or 12 h, with or without
seconds), written here as small chats of our own and read back exactly; and the files that
cannot decide, refused with the orders that would read them."""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from pathlib import Path

import pytest

from chatledger.core import InputError
from chatledger.corpus.exports import ExportSource, ReadContext
from chatledger.corpus.exports._whatsapp import WhatsAppReader
from test_cli_errors import chatledger

# Four days chosen so that each order is the only one that reads them as WhatsApp dates in time
# order: the 31st is no month, 2005 (20-01-05 read day first) is before WhatsApp began.
MOMENTS = [
    datetime(2020, 1, 5, 0, 30),
    datetime(2020, 1, 31, 9, 5, 7),
    datetime(2020, 2, 1, 12, 0),
    datetime(2020, 12, 24, 23, 59, 59),
]
FIELDS = {"dmy": "%d{0}%m{0}%y", "mdy": "%m{0}%d{0}%y", "ymd": "%y{0}%m{0}%d",
          "ydm": "%y{0}%d{0}%m"}  # fmt: skip
TIMES = {"24h": "%H:%M", "24h-seconds": "%H:%M:%S", "12h": "%I:%M %p",
         "12h-seconds": "%I:%M:%S %p"}  # fmt: skip
LAYOUTS = list(itertools.product(FIELDS, "-/.", ("android", "ios"), TIMES))


def header(moment: datetime, order: str, sep: str, shape: str, clock: str) -> str:
    day = moment.strftime(FIELDS[order].format(sep))
    time = moment.strftime(TIMES[clock])
    return f"{day}, {time} - " if shape == "android" else f"[{day} {time}] "


def read(path: Path, date_order: str = "auto") -> tuple[list[datetime], ReadContext]:
    context = ReadContext(date_order=date_order)  # type: ignore[arg-type]
    with ExportSource.open_path(path) as source:
        (conversation,) = WhatsAppReader().conversations(source, context)
        return [m.timestamp for m in conversation.messages], context


def test_the_peer_parsers_ninety_six_layouts() -> None:
    assert len(LAYOUTS) == 96


@pytest.mark.parametrize(("order", "sep", "shape", "clock"), LAYOUTS)
def test_every_layout_family_reads_exactly(
    order: str, sep: str, shape: str, clock: str, tmp_path: Path
) -> None:
    path = tmp_path / "chat.txt"
    lines = [f"{header(m, order, sep, shape, clock)}Mary: message {i}" for i, m in
             enumerate(MOMENTS)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = [m.replace(second=m.second if "seconds" in clock else 0) for m in MOMENTS]
    found, _ = read(path)
    assert found == expected
    # The order the detector decided is one --date-order accepts, and it reads the same.
    assert read(path, order)[0] == expected


def test_two_digit_years_first_are_not_read_day_first(tmp_path: Path) -> None:
    """The issue's case: ``20-01-05, 00:30 - Mary:`` was read as 20 January 2005, silently."""
    path = tmp_path / "chat.txt"
    path.write_text("20-01-05, 00:30 - Mary: hi\n20-01-31, 10:00 - John: yo\n", encoding="utf-8")
    found, context = read(path)
    # 20-01-31 is no year/day/month (month 31) and no month/day/year (month 20); day first
    # would put the first message in 2005, before WhatsApp: year/month/day, and the note says why.
    assert found == [datetime(2020, 1, 5, 0, 30), datetime(2020, 1, 31, 10)]
    assert context.notes == [
        f"{path}: dates read as year/month/day: the other readings put messages before 2009, "
        "when WhatsApp began"
    ]


def test_a_file_that_cannot_decide_is_refused_with_the_orders_that_read_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.txt"
    path.write_text("20-01-05, 00:30 - Mary: hi\n20-01-06, 10:00 - John: yo\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.detail == (
        "cannot tell the order of day, month and year: every date reads as year/month/day or as "
        "year/day/month (line 1's 20-01-05 is 2020-01-05 (--date-order ymd) or 2020-05-01 "
        "(--date-order ydm)); pass --date-order ymd or ydm"
    )
    assert read(path, "ymd")[0] == [datetime(2020, 1, 5, 0, 30), datetime(2020, 1, 6, 10)]
    assert read(path, "ydm")[0] == [datetime(2020, 5, 1, 0, 30), datetime(2020, 6, 1, 10)]
    # Day first only when asked: 20 January 2005 is then what the user said.
    assert read(path, "dmy")[0][0] == datetime(2005, 1, 20, 0, 30)


def test_time_order_decides_between_readings_that_are_all_dates(tmp_path: Path) -> None:
    # 12/11/2020 then 01/12/2020: 12 Nov → 1 Dec day first; 11 Dec → 12 Jan month first,
    # eleven months back. Both are dates; only day first keeps the messages in order.
    path = tmp_path / "chat.txt"
    path.write_text(
        "12/11/2020, 10:00 - Ana: one\n01/12/2020, 10:00 - Ana: two\n", encoding="utf-8"
    )
    found, context = read(path)
    assert found == [datetime(2020, 11, 12, 10), datetime(2020, 12, 1, 10)]
    assert context.notes == [
        f"{path}: dates read as day/month/year: the other readings put the messages out of "
        "time order"
    ]


def test_every_date_reading_the_same_needs_no_decision(tmp_path: Path) -> None:
    path = tmp_path / "chat.txt"  # 05/05/2026: 5 May whichever field is the day
    path.write_text("05/05/2026, 10:00 - Ana: one\n", encoding="utf-8")
    assert read(path)[0] == [datetime(2026, 5, 5, 10)]


def test_date_order_on_the_command_line(tmp_path: Path) -> None:
    export = tmp_path / "chat.txt"
    export.write_text("20-01-05, 00:30 - Mary: hi\n20-01-06, 10:00 - John: yo\n", "utf-8")
    refused = chatledger("corpus", "import", "whatsapp", str(export), "--out", "out", cwd=tmp_path)
    assert refused.code != 0 and len(refused.err.strip().splitlines()) == 1
    assert "pass --date-order ymd or ydm" in refused.err
    for order, first in (("ymd", "2020-01-05T00:30:00"), ("ydm", "2020-05-01T00:30:00"),
                         ("dmy", "2005-01-20T00:30:00")):  # fmt: skip
        done = chatledger("corpus", "import", "whatsapp", str(export), "--out", order,
                          "--date-order", order, "--format", "json", cwd=tmp_path)  # fmt: skip
        assert done.code == 0, done.err
        assert json.loads(done.out)["first_message"] == first
    wrong = chatledger("corpus", "import", str(export), "--out", "x", "--date-order", "yyy",
                       cwd=tmp_path)  # fmt: skip
    assert wrong.code != 0 and "expected auto, dmy, mdy, ymd or ydm" in wrong.err
