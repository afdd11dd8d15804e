"""The live figures' kernel half, over the real Jupyter protocol: a real IPython kernel (started
here through jupyter_client, shut down even when the test fails) creates each figure; the test
then plays the frontend, sending the comm message the figure's JavaScript sends
(``{"method": "custom", "content": {"rlb_ask", "session", "request"}}``) and reading the reply
the JavaScript draws from. The replies must equal ``rocketlb_core.interactive.handle`` in this
process for the same requests: in JupyterLab the kernel computes, with the same code as Pyodide.
"""

from __future__ import annotations

import copy
import queue
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from rocketlb_core.interactive import handle

pytestmark = pytest.mark.kernel

TIMEOUT_S = 60


@pytest.fixture(scope="module")
def kernel() -> Iterator[Any]:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _comm_of(kc: Any, code: str) -> str:
    """Run ``code`` (ending in a figure) and return the comm id of the figure's model."""
    msg_id = kc.execute(code)
    target = None
    while True:
        msg = kc.get_iopub_msg(timeout=TIMEOUT_S)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        content = msg["content"]
        if msg["msg_type"] == "error":
            raise AssertionError("\n".join(content["traceback"]))
        if msg["msg_type"] == "execute_result":
            view = content["data"].get("application/vnd.jupyter.widget-view+json")
            target = view and view["model_id"]
        if msg["msg_type"] == "status" and content["execution_state"] == "idle":
            break
    assert target, "the cell displayed no widget"
    return target


def _ask(kc: Any, comm: str, n: int, session: str, request: dict) -> dict:
    """Send what live_common.js sends; return the view the kernel replies with."""
    msg = kc.session.msg("comm_msg", {"comm_id": comm, "data": {
        "method": "custom", "content": {"rlb_ask": n, "session": session, "request": request}}})
    kc.shell_channel.send(msg)
    while True:
        try:
            reply = kc.get_iopub_msg(timeout=TIMEOUT_S)
        except queue.Empty:
            raise AssertionError("the kernel did not answer the figure") from None
        data = reply["content"].get("data", {})
        if reply["msg_type"] == "comm_msg" and reply["content"].get("comm_id") == comm and \
                data.get("method") == "custom" and data["content"].get("rlb_reply") == n:
            return dict(data["content"]["view"])


def test_the_playground_sends_in_the_kernel_as_in_cpython(kernel: Any) -> None:
    from rocketlb_core.viz.widgets import playground

    comm = _comm_of(kernel, "from rocketlb_core.viz.widgets import playground\n"
                            "playground(preset='broker-b answers in 700 ms')")
    cfg = playground(preset="broker-b answers in 700 ms").request["config"]
    session, mine = uuid.uuid4().hex, uuid.uuid4().hex
    assert _ask(kernel, comm, 1, session, {"config": cfg, "op": "view"}) == handle(
        "playground", mine, {"config": cfg, "op": "view"})
    for n in range(2, 30):
        request = {"config": cfg, "op": "send", "n": 1 + n % 7}
        got = _ask(kernel, comm, n, session, request)
        assert got == handle("playground", mine, request)
    assert got["sent"] > 100
    assert "error" in _ask(kernel, comm, 99, session, {"config": {"line": "9"}, "op": "view"})


def test_the_board_and_an_exercise_answer_in_the_kernel_as_in_cpython(kernel: Any) -> None:
    comm = _comm_of(kernel, "from rocketlb_core.viz.widgets import board\nboard()")
    state = {"brokers": 3, "queues": 6, "duplicate": False, "pop_share": 1,
             "zones": {f"c{k}": ("room-1" if k % 2 else "room-2") for k in range(1, 12)}}
    session, mine = uuid.uuid4().hex, uuid.uuid4().hex
    for n, who in enumerate(["c3", "c4", "c5", "c3"], start=1):
        state["zones"][who] = "out" if state["zones"][who] != "out" else "room-1"
        request = {"state": copy.deepcopy(state), "op": "view"}
        got = _ask(kernel, comm, n, session, request)
        assert got == handle("board", mine, request)
    assert any(r["n_moved"] for r in got["rows"])
    comm = _comm_of(kernel, "from rocketlb_core.viz.widgets import exercise\n"
                            "exercise('c1?', 'share_of', strategy='AVG', brokers=3, queues=6, "
                            "consumers=11, k=1)")
    request = {"exercise": "share_of", "answer": "2", "params": {
        "strategy": "AVG", "brokers": 3, "queues": 6, "consumers": 11, "k": 1}}
    got = _ask(kernel, comm, 1, "x", request)
    assert got == handle("exercise", "x", request)
    assert got["right"]
