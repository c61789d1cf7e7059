"""Host-run targets check the CPU before running their code (edgecc/build/host.py): a target whose
instructions this machine lacks fails with one line naming the missing flags, not with SIGILL."""
from __future__ import annotations

import dataclasses

import pytest

from conftest import shared_model
from edgecc.errors import EdgeccError
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.host import check_host_can_run, cpu_flags


def test_cpu_flags_read():
    assert "fpu" in cpu_flags() or not cpu_flags()  # x86 lists fpu; elsewhere may be empty


def test_missing_flag_is_one_line_error():
    t = dataclasses.replace(get_target("x86-avx2"), host_cpu=frozenset({"avx2", "no_such_flag"}))
    with pytest.raises(EdgeccError) as e:
        check_host_can_run(t)
    assert "no_such_flag" in str(e.value) and "avx2," not in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(EdgeccError, match="cannot run x86-avx2 code"):
        verify_model(shared_model("hello_world_int8"), t)


def test_avx512_target_runs_or_says_why():
    t = get_target("x86-avx512")
    if t.host_cpu <= cpu_flags():
        assert verify_model(shared_model("hello_world_int8"), t).bit_exact
    else:
        with pytest.raises(EdgeccError, match="cannot run x86-avx512"):
            verify_model(shared_model("hello_world_int8"), t)
