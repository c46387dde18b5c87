"""Where the data files are: the small ones in the package (the wheel), the extended tree sets
in the repository's data/ folder (not in the wheel), found from a checkout or $OPTACCEPT_DATA,
with an error naming both when neither holds them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from optaccept import real
from optaccept.real import _data

ROOT = Path(__file__).resolve().parents[2]


def test_small_files_are_package_data():
    package = ROOT / "optaccept" / "data"
    assert real.sample_path().parent.resolve() == package
    for d in ("iid", "swor"):
        assert real.trees_path(d).resolve() == package / _data.TREES_FILES[d]
        assert real.trees_path(d).is_file()


def test_extended_trees_are_found_in_the_checkout():
    assert _data.REPO_DATA == ROOT / "data"
    for d in ("iid", "swor"):
        path = real.trees_path(d, "extended")
        assert path == ROOT / "data" / _data.EXTENDED_TREES_FILES[d] and path.is_file()
        assert not (ROOT / "optaccept" / "data" / path.name).exists()  # never package data


def test_extended_trees_absent_name_the_folder_and_the_variable(tmp_path, monkeypatch):
    """An installed wheel outside the repository: a clear error, not a missing-file traceback
    deep inside np.load."""
    monkeypatch.setattr(_data, "REPO_DATA", tmp_path / "nowhere")
    monkeypatch.delenv(_data.DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError) as err:
        real.trees_path("swor", "extended")
    msg = str(err.value)
    assert "smollm2_layerskip_trees_swor_extended.npz" in msg and "data/" in msg and "OPTACCEPT_DATA" in msg
    assert str(tmp_path / "nowhere") in msg


def test_extended_trees_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setattr(_data, "REPO_DATA", tmp_path / "nowhere")
    name = _data.EXTENDED_TREES_FILES["iid"]
    (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv(_data.DATA_ENV, str(tmp_path))
    assert real.trees_path("iid", "extended") == tmp_path / name
    monkeypatch.setenv(_data.DATA_ENV, str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="empty"):
        real.trees_path("iid", "extended")


def test_package_data_is_the_small_files_only():
    """pyproject's package data matches every file of optaccept/data the library reads, and
    nothing else is there (the extended sets moved out so the wheel stays small)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["optaccept"]
    package = ROOT / "optaccept" / "data"
    shipped = {p.name for g in globs for p in (ROOT / "optaccept").glob(g)}
    on_disk = {p.name for p in package.iterdir() if p.is_file() and p.suffix != ".py"}
    assert shipped == on_disk
    assert sum((package / n).stat().st_size for n in shipped) < 5_000_000
    from optaccept.jobs.trees import BUDGET_LAWS  # the main job reads it from the package folder

    assert BUDGET_LAWS in shipped
