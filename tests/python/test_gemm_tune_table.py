"""The client's table of matmul autotuning's choices (client/tccd/runtime.py, _TuneTable), without
a GPU: its layout mirrors codegen/cuda_host/runtime/tccd_cuda_tune.h, a saved table is read back
for another device ordinal with the lock free, one of another layout is ignored, and a table is
written only when it grew. The runtime's use of the table is tested against fake drivers
(tests/codegen/cuda_host/cuda_host_fake_driver_test.cc, "libraries given one tuning table ...").
"""

import re
import struct
from pathlib import Path

from tccd import runtime

HEADER = Path(__file__).resolve().parents[2] / "codegen/cuda_host/runtime/tccd_cuda_tune.h"


def _define(name):
    m = re.search(rf"#define {name} (0x[0-9a-fA-F]+|\d+)", HEADER.read_text())
    assert m, name
    return int(m.group(1).rstrip("ull"), 0)


def test_the_layout_mirrors_the_c_header():
    assert runtime._TUNE_MAGIC == _define("TCCD_RT_TUNE_TABLE_MAGIC")
    assert runtime._TUNE_SLOTS == _define("TCCD_RT_TUNE_TABLE_SLOTS")
    assert runtime._TUNE_KEY_WORDS == _define("TCCD_RT_TUNE_KEY_WORDS")
    # struct tccd_rt_tune_entry: key words, algo[8], workspace_size, used (uint64_t), then the
    # chosen and the heuristic's first's times (float).
    text = HEADER.read_text()
    entry = re.search(r"struct tccd_rt_tune_entry \{(.*?)\};", text, re.S).group(1)
    assert [l.split()[1].split("[")[0].rstrip(";") for l in entry.strip().splitlines()] == [
        "key", "algo", "workspace_size", "used", "chosen_ms", "first_ms"]
    assert runtime._TUNE_ENTRY_BYTES == (runtime._TUNE_KEY_WORDS + 8 + 2) * 8 + 2 * 4
    assert runtime._TUNE_USED_OFFSET == (runtime._TUNE_KEY_WORDS + 8 + 1) * 8


def _entry_offset(i):
    return runtime._TUNE_HEADER.size + i * runtime._TUNE_ENTRY_BYTES


def _fill(table, slot, device, algo_word):
    """Writes one used entry into `table` (a _TuneTable) as the runtime would."""
    off = _entry_offset(slot)
    key = [64, 32, 16, 64, 16, 64, 1, 0, 0, 0, 0, 68, 0x3F800000, device]
    struct.pack_into(f"<{len(key)}Q", table.buffer, off, *key)
    struct.pack_into("<Q", table.buffer, off + runtime._TUNE_KEY_WORDS * 8, algo_word)
    struct.pack_into("<Q", table.buffer, off + runtime._TUNE_USED_OFFSET, 1)
    magic, eb, slots, lock, filled = runtime._TUNE_HEADER.unpack_from(table.buffer, 0)
    runtime._TUNE_HEADER.pack_into(table.buffer, 0, magic, eb, slots, lock, filled + 1)


def test_a_saved_table_is_read_back_for_another_device_with_its_lock_free(tmp_path):
    path = str(tmp_path / "gemm-tune" / "t.bin")
    first = runtime._TuneTable(path, device_index=3)
    assert first.filled() == 0
    first.save_if_grown()
    assert not (tmp_path / "gemm-tune" / "t.bin").exists()  # nothing new: nothing written
    _fill(first, 17, device=3, algo_word=0xA2)
    # Saved with the lock held (another thread was inside): the reader frees it.
    magic, eb, slots, _, filled = runtime._TUNE_HEADER.unpack_from(first.buffer, 0)
    runtime._TUNE_HEADER.pack_into(first.buffer, 0, magic, eb, slots, 1, filled)
    first.save_if_grown()
    assert (tmp_path / "gemm-tune" / "t.bin").stat().st_size == runtime._TUNE_TABLE_BYTES

    second = runtime._TuneTable(path, device_index=0)
    assert second.filled() == 1 and second.saved == 1
    assert runtime._TUNE_HEADER.unpack_from(second.buffer, 0)[3] == 0  # lock
    off = _entry_offset(17)
    words = struct.unpack_from(f"<{runtime._TUNE_KEY_WORDS + 1}Q", second.buffer, off)
    assert words[runtime._TUNE_KEY_WORDS - 1] == 0  # the device word: this process's ordinal
    assert words[runtime._TUNE_KEY_WORDS] == 0xA2  # the algorithm as saved
    assert words[0] == 64


def test_a_table_of_another_layout_is_ignored(tmp_path):
    path = tmp_path / "t.bin"
    table = runtime._TuneTable(str(path), device_index=0)
    _fill(table, 5, device=0, algo_word=0xA1)
    data = bytearray(table.buffer.raw)
    struct.pack_into("<Q", data, 0, runtime._TUNE_MAGIC + 1)  # another version's magic
    path.write_bytes(bytes(data))
    assert runtime._TuneTable(str(path), device_index=0).filled() == 0
    path.write_bytes(table.buffer.raw[:-8])  # truncated
    assert runtime._TuneTable(str(path), device_index=0).filled() == 0
    path.write_bytes(table.buffer.raw)
    assert runtime._TuneTable(str(path), device_index=0).filled() == 1


def test_no_path_keeps_the_table_in_the_process(tmp_path):
    table = runtime._TuneTable(None, device_index=0)
    _fill(table, 1, device=0, algo_word=0xA1)
    table.save_if_grown()  # nowhere to write: no error
    assert table.filled() == 1 and table.saved == 0
