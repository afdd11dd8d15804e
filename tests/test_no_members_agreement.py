"""Issue 32's soak (soak seed 20261127, scenario seed 153592582928678, line 5: 5.3.3 clients
and servers), ``tests/fixtures/live/no-members-5``: both consumers' ``start()`` threw on a loaded
host (their first route lookup timed out). 5.3.3's ``DefaultMQPushConsumerImpl.start`` then
calls ``shutdown()`` and rethrows, so the group never had a member: no broker logged one, the
importer wrote no ``membership.parquet``, and the check failed with ``FileNotFoundError``
instead of reporting no assignment to explain."""

from __future__ import annotations

import gzip
from pathlib import Path

from rocketlb_core.trace.agreement import check_recording
from rocketlb_core.trace.importer import import_recording

RECORDING = Path(__file__).parent / "fixtures" / "live" / "no-members-5"


def test_a_group_that_never_had_a_member_has_nothing_to_explain(tmp_path: Path) -> None:
    import_recording(RECORDING, tmp_path / "trace")
    assert not (tmp_path / "trace" / "membership.parquet").exists()
    result = check_recording(RECORDING, tmp_path / "trace")
    for name in ("c1", "c2"):
        with gzip.open(RECORDING / "logs" / name / "rocketmq_client.log.gz", "rt") as f:
            log = f.read()
        assert "rebalanced result changed" not in log        # the client never balanced
        c = result["consumers"][name]
        assert (c["logged"], c["unexplained"]) == (0, 0)
    assert result["producers"]["p1-off"]["unexplained"] == 0
