"""The harness itself: a world that outlives its deadline is killed and the
failure carries the ranks' stacks, so a hang in CI can be diagnosed."""

import shutil
import time

import pytest

from harness import run_world


def _sleep_world(rank, ws, flag_dir):
    open(f"{flag_dir}/{rank}", "w").close()
    time.sleep(600)


@pytest.mark.slow  # 90 s of deadline plus gdb: in make test-distributed
@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
def test_a_hung_world_fails_with_its_stacks(tmp_path):
    t0 = time.monotonic()
    # The deadline covers spawning and importing torch on a loaded machine.
    with pytest.raises(TimeoutError) as e:
        run_world(_sleep_world, args=(str(tmp_path),), backend=None, deadline_s=90)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1"]  # both ranks reached the hang
    msg = str(e.value)
    assert "did not finish in 90 s" in msg
    assert msg.count("==== rank pid") == 2, msg[-3000:]
    path = msg.split("native stacks also in ")[1].split(")")[0]
    text = open(path).read()
    for section in text.split("==== rank pid")[1:]:
        # gdb's threads, or its own word on why not (it can time out on a loaded machine)
        assert "Thread 1 " in section or "gdb failed" in section, section[:2000]
    assert time.monotonic() - t0 < 300  # killed, not waited for
