"""Build-time assets: everything the book's pages load comes from installed packages."""

from __future__ import annotations

from pathlib import Path

from rocketlb_core.viz.assets import FONT_DIRS, build


def test_assets_build_from_installed_packages(tmp_path: Path, root: Path) -> None:
    written = build(tmp_path, root / "node_modules")
    names = {p.name for p in written}
    assert {"vega-bundle.js", "require.js", "embed-amd.js", "anywidget.js",
            "widgets-config.js"} <= names
    bundle = (tmp_path / "vega-bundle.js").read_text()
    assert bundle.startswith("(function(){")
    assert bundle.rstrip().endswith("})();")
    assert "vegaEmbed" in bundle
    for folder in FONT_DIRS:       # wherever html-manager's CSS may resolve them
        fonts = list((tmp_path / folder).glob("*.woff2"))
        assert fonts, f"html-manager's icon fonts must be served locally from {folder}"
    config = (tmp_path / "widgets-config.js").read_text()
    assert "__jupyter_widgets_assets_path__" in config
    assert "anywidget" in config


def test_the_memory_snapshot_is_wasm_memory_and_a_failure_leaves_nothing(
        tmp_path: Path, root: Path) -> None:
    import gzip

    import pytest

    from rocketlb_core.viz.assets import SNAPSHOT, memory_snapshot

    written = build(tmp_path / "ok", root / "node_modules")
    snap = tmp_path / "ok" / "pyodide" / SNAPSHOT
    assert snap in written
    memory = gzip.decompress(snap.read_bytes())
    assert memory[:4] == b"\x00snp"                                # Pyodide's snapshot format
    assert len(memory) > 16 * 2**20
    assert b"rocketlb_core.interactive" in memory                  # imported before the dump
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    out = tmp_path / "bad" / SNAPSHOT
    out.parent.mkdir()
    with pytest.raises(RuntimeError, match=r"make-snapshot\.mjs failed"):
        memory_snapshot(tmp_path / "ok" / "pyodide", bad, out)
    assert list(out.parent.iterdir()) == []
