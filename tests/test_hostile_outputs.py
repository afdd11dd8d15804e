"""Every single file a command writes goes through the output guard (issue 44, item 5):
``python -m rocketlb_core.live generate --out FILE`` and ``rocketlb doctor --html PAGE`` write
atomically through ``atomic.atomic_file``, only where no file is or over a file rocketlb wrote,
and every refusal or failure is exit 2 naming the user's path (never a temporary file, never a
traceback), leaving what was there as it was and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from rocketlb_core.live.__main__ import main as live_main
from rocketlb_core.live.generate import MARK


def _generate(out: Path | str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = live_main(["generate", "--seed", "7", "--out", str(out)])
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, err.getvalue()


def test_generate_writes_and_rewrites_its_own_file(tmp_path: Path) -> None:
    out = tmp_path / "random.toml"
    assert _generate(out) == (0, "")
    first = out.read_text(encoding="utf-8")
    assert first.startswith(MARK)
    assert _generate(out) == (0, "")          # its own file: replaced, same bytes
    assert out.read_text(encoding="utf-8") == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["random.toml"]


def test_generate_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine.toml"
    out.write_text("name = \"my own scenario\"\n", encoding="utf-8")
    status, err = _generate(out)
    assert status == 2
    assert str(out) in err
    assert "did not write it" in err
    assert out.read_text(encoding="utf-8") == "name = \"my own scenario\"\n"


@pytest.mark.parametrize(("where", "says"), [
    ("folder", "not a regular file"),
    ("missing-parent", "its folder does not exist"),
    ("/dev/full", "not a regular file"),
    ("/dev/null", "not a regular file"),
    ("link", "not a regular file"),
    ("/proc/rocketlb-never.toml", "cannot write"),
])
def test_generate_refuses_places_it_cannot_write(tmp_path: Path, where: str, says: str) -> None:
    if where == "folder":
        out: Path = tmp_path
    elif where == "missing-parent":
        out = tmp_path / "no" / "such" / "x.toml"
    elif where == "link":
        (tmp_path / "target.toml").write_text("x = 1\n", encoding="utf-8")
        out = tmp_path / "link.toml"
        out.symlink_to(tmp_path / "target.toml")
    else:
        out = Path(where)
    before = sorted(p.name for p in tmp_path.iterdir())
    status, err = _generate(out)
    assert status == 2, err
    assert str(out) in err, err
    assert says in err, err
    assert "Traceback" not in err
    assert ".tmp" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_doctor_page_goes_through_the_same_guard(tmp_path: Path) -> None:
    from rocketlb_core.atomic import OutputError
    from rocketlb_core.doctor.html import GENERATOR, write_html

    page = tmp_path / "doctor.html"
    write_html(page, GENERATOR + "\n<p>one</p>\n")
    write_html(page, GENERATOR + "\n<p>two</p>\n")
    assert "two" in page.read_text(encoding="utf-8")
    page.write_text("<p>the user's notes</p>\n", encoding="utf-8")
    with pytest.raises(OutputError, match="did not write it"):
        write_html(page, GENERATOR + "\n<p>three</p>\n")
    assert page.read_text(encoding="utf-8") == "<p>the user's notes</p>\n"
    with pytest.raises(OutputError, match="not a regular file"):
        write_html(Path("/dev/full"), GENERATOR + "\n")
