"""Read back what an offline W&B run wrote: the records of its ``run-<id>.wandb`` file.

wandb 0.31 ships no reader for its transaction log (the old ``wandb.sdk.internal.datastore``
is gone), so this follows its format: a 7-byte header (``:W&B``, magic 0xBEE1, version 0),
then LevelDB-log records (crc32c, length, type FULL/FIRST/MIDDLE/LAST) in 32 KiB blocks,
each record a ``wandb_internal_pb2.Record`` protobuf from wandb itself.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path
from typing import Any, Iterator

BLOCK = 32768
HEADER = struct.Struct("<4sHB")
CHUNK = struct.Struct("<IHB")
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path: Path) -> Iterator[Any]:
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    ident, magic, version = HEADER.unpack_from(data)
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0), f"{path} is not a W&B transaction log"
    pos, parts = HEADER.size, b""
    while pos + CHUNK.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK.size:  # block trailer: zero padding
            pos += left
            continue
        _, length, kind = CHUNK.unpack_from(data, pos)
        if kind == 0:  # padding to the end of the block
            pos += left
            continue
        if pos + CHUNK.size + length > len(data):  # a record still being written
            return
        chunk = data[pos + CHUNK.size: pos + CHUNK.size + length]
        pos += CHUNK.size + length
        parts = chunk if kind in (FULL, FIRST) else parts + chunk
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(parts)
            yield record


def _key(item: Any) -> str:
    return item.key or "/".join(item.nested_key)


def finished_records(path: Path, timeout: float = 20.0) -> list[Any]:
    """The records of a finished run: wandb-core may still be writing the file after ``run.finish()`` returns."""
    deadline = time.monotonic() + timeout
    while True:
        found = list(records(path))
        if any(r.WhichOneof("record_type") == "exit" for r in found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def read_run(path: Path) -> dict[str, Any]:
    """{"run": the run record, "config": {key: value}, "history": [{key: value}], "summary": {key: value},
    "exit": whether the run was finished}."""
    out: dict[str, Any] = {"run": None, "config": {}, "history": [], "summary": {}, "exit": False}
    for record in finished_records(path):
        kind = record.WhichOneof("record_type")
        out["exit"] = out["exit"] or kind == "exit"
        if kind == "run":  # wandb.init(config=...) arrives here, config.update(...) in config records
            out["run"] = record.run
            out["config"].update({_key(u): json.loads(u.value_json) for u in record.run.config.update})
        elif kind == "config":
            out["config"].update({_key(u): json.loads(u.value_json) for u in record.config.update})
        elif kind == "history":
            out["history"].append({_key(i): json.loads(i.value_json) for i in record.history.item})
        elif kind == "summary":
            out["summary"].update({_key(u): json.loads(u.value_json) for u in record.summary.update})
    return out
