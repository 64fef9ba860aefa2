"""The typed run manifest: version-1 manifests (the published runs) load and keep
every key; unknown keys survive a round trip; a bad file is one clear error."""
from __future__ import annotations

import json

import pytest

from testbed import paths
from testbed.records import manifest
from testbed.records.manifest import ManifestError, RunManifest

PUBLISHED = sorted(paths.REPORTS_DIR.glob("*/*/manifest.json"))


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.parent.parent.name)
def test_published_v1_manifests_load_and_keep_their_keys(path):
    data = json.loads(path.read_text())
    m = manifest.load(path.parent)
    assert m.run_id == data["run_id"] and m.experiment == data["experiment"] and m.status == data["status"]
    out = m.to_dict()
    for key, value in data.items():
        if key != "schema":
            assert out[key] == value, key  # nothing lost, nothing renamed
    assert out["schema"] == manifest.SCHEMA


def test_round_trip_keeps_key_order_and_extra_keys(tmp_path):
    m = RunManifest(run_id="r1", experiment="e", libraries=[{"label": "a"}])
    m.extra["noise_floor_run"] = "../x"
    m.save(tmp_path)
    text = (tmp_path / "manifest.json").read_text()
    keys = list(json.loads(text))
    assert keys[:4] == ["schema", "run_id", "status", "experiment"] and keys[-1] == "noise_floor_run"
    again = manifest.load(tmp_path)
    assert again == m and again.to_dict() == m.to_dict()


@pytest.mark.parametrize("content,needle", [
    ("{", "not JSON"),
    ('{"schema": "testbed.manifest/9", "run_id": "r", "experiment": "e"}', "testbed.manifest/9"),
    ('{"schema": "testbed.manifest/2", "experiment": "e"}', "missing run_id"),
    ("[1]", "not a JSON object"),
])
def test_bad_manifest_is_one_clear_error(tmp_path, content, needle):
    (tmp_path / "manifest.json").write_text(content)
    with pytest.raises(ManifestError) as info:
        manifest.load(tmp_path)
    assert str(tmp_path / "manifest.json") in str(info.value) and needle in str(info.value)


def test_missing_manifest_names_the_file(tmp_path):
    with pytest.raises(ManifestError) as info:
        manifest.load(tmp_path)
    assert "cannot read" in str(info.value) and str(tmp_path) in str(info.value)
