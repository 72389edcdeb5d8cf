"""TensorBoardWriter writes real TensorBoard event files (through tensorboardX).

The file is read back without tensorboard: the TFRecord framing is parsed by hand (each
record: u64 length, masked CRC-32C of the length, payload, masked CRC-32C of the payload;
the CRCs are checked with an independent CRC-32C) and each payload is decoded with the
`Event` protobuf that tensorboardX ships.
"""

from __future__ import annotations

import struct
from pathlib import Path

import tensorboardX  # noqa: F401  (the [tensorboard] extra is part of this session)
from tensorboardX.proto import event_pb2  # noqa: E402

from pipekit_train import TensorBoardWriter  # noqa: E402
from pipekit_train.writers import resolve_writer  # noqa: E402


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def _masked_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(path: Path) -> list[event_pb2.Event]:
    data = path.read_bytes()
    events, pos = [], 0
    while pos < len(data):
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        assert header_crc == _masked_crc32c(header), "corrupt record length"
        payload = data[pos + 12 : pos + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
        assert payload_crc == _masked_crc32c(payload), "corrupt record payload"
        event = event_pb2.Event()
        event.ParseFromString(payload)
        events.append(event)
        pos += 16 + length
    assert pos == len(data)
    return events


def scalars(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    files = sorted(logdir.glob("events.out.tfevents.*"))
    assert files, f"no event file in {logdir}"
    out: dict[str, list[tuple[int, float]]] = {}
    for path in files:
        for event in read_events(path):
            if not event.HasField("summary"):
                continue
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    number = value.simple_value
                else:  # newer summary style: a scalar tensor
                    number = value.tensor.float_val[0]
                out.setdefault(value.tag, []).append((event.step, number))
    return out


def test_scalars_are_read_back_from_the_event_file(tmp_path: Path) -> None:
    logdir = tmp_path / "tb" / "run1"
    writer = TensorBoardWriter(logdir)
    writer.write(10, {"loss": 0.5, "accuracy": 0.75})
    writer.write(20, {"loss": 0.25})
    writer.write(20, {"val_loss": 0.375})
    writer.flush()
    got = scalars(logdir)
    assert got["loss"] == [(10, 0.5), (20, 0.25)]
    assert got["accuracy"] == [(10, 0.75)]
    assert got["val_loss"] == [(20, 0.375)]
    writer.close()
    first = read_events(sorted(logdir.glob("events.out.tfevents.*"))[0])[0]
    assert first.file_version.startswith("brain.Event:")


def test_string_form_and_resumed_writes_go_to_the_same_logdir(tmp_path: Path) -> None:
    logdir = tmp_path / "tb"
    first = resolve_writer(f"tensorboard:{logdir}")
    assert isinstance(first, TensorBoardWriter)
    first.write(1, {"loss": 2.0})
    first.close()
    resumed = resolve_writer({"kind": "tensorboard", "path": str(logdir)})
    resumed.write(1, {"loss": 2.0})
    resumed.write(2, {"loss": 1.0})
    resumed.close()
    resumed.close()  # harmless
    assert sorted(scalars(logdir)["loss"]) == [(1, 2.0), (1, 2.0), (2, 1.0)]


def test_close_without_writes_creates_no_logdir(tmp_path: Path) -> None:
    TensorBoardWriter(tmp_path / "never").close()
    assert not (tmp_path / "never").exists()
