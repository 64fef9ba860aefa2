"""The importer reads every table of the five published seed reports."""
import pytest

from testbed import paths
from testbed.results import published

SEEDS = sorted(paths.SEEDS_DIR.glob("*.txt")) if paths.SEEDS_DIR.is_dir() else []
pytestmark = pytest.mark.skipif(len(SEEDS) != 5, reason=f"the five seed reports are not in {paths.SEEDS_DIR}")


def _seed(prefix):
    return published.import_report(next(p for p in SEEDS if p.name.startswith(prefix)))


def _one(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, f"{kw}: {len(sel)} rows"
    return sel.iloc[0]


@pytest.mark.parametrize("prefix,rows", [("000", 144), ("001", 56), ("002", 96), ("003", 288), ("004", 192)])
def test_every_cell_of_every_seed_is_imported(prefix, rows):
    r = _seed(prefix)
    assert len(r.frame) == rows
    assert (r.frame["provenance"].str.contains("§")).all()
    assert r.frame["value"].notna().all()


def test_only_summary_tables_are_skipped():
    assert len(_seed("000").skipped) == 2          # win counts and categories: claims, not cells
    for p in ("001", "002", "003", "004"):
        assert _seed(p).skipped == []


def test_seed_004_per_batch_size_sections():
    df = _seed("004").frame
    row = _one(
        df, pattern="PUBSUB", config="baseline", msg_size=64, library="zlink", metric="throughput_msgs"
    )
    assert row["value"] == pytest.approx(5.65e6)
    assert row["value_precise"] == pytest.approx(5.07e6 * 1.1162)
    assert row["io_threads"] == 2 and row["param_ZMQ_ASIO_TCP_MAX_TRANSFER"] == "262144"
    row = _one(
        df, pattern="ROUTER_ROUTER", config="64 KiB", msg_size=262144, library="zlink", metric="lat_mean_us"
    )
    assert row["value"] == pytest.approx(150.67) and row["param_ZMQ_ASIO_IN_BATCH_SIZE"] == "65536"
    assert set(df["config"]) == {"baseline", "16 KiB", "32 KiB", "64 KiB"}
    assert _one(df, pattern="PUBSUB", config="baseline", msg_size=64, library="zlink",
                metric="throughput_msgs")["param_ZMQ_ASIO_IN_BATCH_SIZE"] == ""


def test_seed_000_fixed_width_blocks_and_analysis_tables():
    df = _seed("000").frame
    blk = df[df["table"] == "results-block"]
    row = _one(
        blk,
        pattern="ROUTER_ROUTER",
        transport="tcp",
        msg_size=64,
        library="ServerLink",
        metric="throughput_msgs",
    )
    assert row["value"] == 5004004
    # "MB/s" in those blocks is MiB/s: 5004004 msg/s x 64 B = 320.26e6 B/s = 305.42 MiB/s.
    mb = _one(
        blk,
        pattern="ROUTER_ROUTER",
        transport="tcp",
        msg_size=64,
        library="ServerLink",
        metric="throughput_mbps",
    )
    assert mb["value"] == pytest.approx(5004004 * 64 / 1e6, rel=1e-4)
    ana = df[df["table"] == "analysis"]
    row = _one(ana, pattern="PUBSUB", transport="inproc", msg_size=65536, library="libzmq-4.3.5")
    assert row["value"] == pytest.approx(161e3)
    z = _one(ana, pattern="PUBSUB", transport="inproc", msg_size=65536, library="ServerLink")
    assert z["value"] == pytest.approx(388e3) and z["value_precise"] == pytest.approx(161e3 * 2.415)


def test_seed_001_mean_std_and_cv_tables():
    df = _seed("001").frame
    row = _one(df, pattern="PAIR", msg_size=64, library="libzmq-4.3.5", metric="throughput_msgs")
    assert row["value"] == pytest.approx(2901416.98) and row["spread"] == pytest.approx(863275.14)
    assert row["n_summarized"] == 10 and row["transport"] == "tcp"
    lat = _one(df, pattern="DEALER_ROUTER", msg_size=64, library="zlink", metric="lat_mean_us")
    assert lat["value"] == pytest.approx(11.04) and lat["spread"] == pytest.approx(0.24)
    assert (
        _one(df, pattern="PUBSUB", msg_size=1024, library="zlink", metric="cv_latency_pct")["value"] == 0.53
    )


def test_seed_002_io_thread_sections():
    df = _seed("002").frame
    row = _one(
        df, pattern="ROUTER_ROUTER", io_threads=4, msg_size=262144, library="zlink", metric="lat_mean_us"
    )
    assert row["value"] == pytest.approx(146.62) and row["config"] == "io_threads=4"
    assert set(df["pattern"]) == {
        "PAIR",
        "PUBSUB",
        "DEALER_DEALER",
        "DEALER_ROUTER",
        "ROUTER_ROUTER",
        "ROUTER_ROUTER_POLL",
    }


def test_seed_003_transports_and_cached_baseline_note():
    r = _seed("003")
    row = _one(
        r.frame,
        pattern="DEALER_ROUTER",
        transport="ipc",
        msg_size=131072,
        library="zlink",
        metric="lat_mean_us",
    )
    assert row["value"] == pytest.approx(77.86) and row["n_summarized"] == 10
    assert any("cached baseline" in n for n in r.notes)


def test_units():
    assert published.parse_quantity("853K msg/s") == (853e3, "msg/s")
    assert published.parse_quantity("**+128.8% (2.29x)** x") == (128.8, "%")
    assert published.parse_quantity("0.20 us") == (0.2, "us")
    assert published.parse_size("64KB") == 65536 and published.parse_size("64 bytes") == 64
    assert published.parse_mean_std("2,901,416.98 ± 863,275.14") == (2901416.98, 863275.14)


def test_bad_file_is_named(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("# nothing here\n")
    with pytest.raises(published.ImportError_, match="x.md: no recognised result table"):
        published.import_report(p)
