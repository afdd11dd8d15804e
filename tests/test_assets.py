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
