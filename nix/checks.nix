# `nix flake check`: zlink's test suite, the analysis tests, notebook execution,
# reports that regenerate unchanged, and Nix formatting.
{
  lib,
  runCommand,
  runCommandCC,
  nixfmt,
  zlink,
  testbed,
  prebuilt,
  baseline,
  nixFiles,
}:

let
  inherit (testbed) env rootWithReports;
  # The checks run the Python code on a writable copy of the sources, with the
  # Nix-built libraries and benches (TESTBED_PREBUILT), so they build nothing.
  # runCommandCC: stdenv's compiler and binutils, which some tests run (`cc` in the
  # libzmq-suite tests, `nm` on the zlink flavours); plain runCommand has neither.
  pythonCheck =
    name: script:
    runCommandCC name { nativeBuildInputs = [ env ]; } ''
      cp -r --no-preserve=mode ${rootWithReports} work
      cd work
      export HOME=$TMPDIR MPLCONFIGDIR=$TMPDIR/mpl TESTBED_ROOT=$PWD
      export TESTBED_PYTHON=${env}/bin/python
      export PYTHONPATH=$PWD/analysis TESTBED_PREBUILT=${prebuilt}
      ${script}
      touch $out
    '';
in
{
  zlink-tests = zlink.override {
    doCheck = true;
    interopLibzmq = baseline;
  };

  analysis-tests = pythonCheck "analysis-tests" ''
    # The toolchain tests exercise the non-Nix path (cargo fetch of the pinned crate,
    # source builds, the hash check on a fetched tree; the libzmq suite and the TSan
    # flags need that fetched tree too); inside a Nix build the libraries come
    # prebuilt from this flake. The netns tests need root, network namespaces and
    # tc, which a build has not; the Slurm cluster test needs root, Debian's Slurm
    # daemons and free ports on the host. zlink@REV needs git and the checkout's history
    # (git archive), which a build has neither of; so do bisect's tests (a repository
    # of test commits, and a clone of this one). The perf-tools tests fetch libzmq's
    # perf programs' pinned crates with cargo, and the ssh-driver test expects perf on
    # PATH: a build has neither (the apps carry perf). The nixfmt stand-in test reads nix/,
    # which this check's source leaves out; the `formatting` check runs the stand-in
    # itself. The two tests that regenerate the committed reports compare figures byte
    # for byte, and this build's matplotlib (nixpkgs') is not the one that drew them
    # (analysis/uv.lock's): reports-unchanged checks the same reports here, with the
    # figures by name. The clang-format suite's test runs the pinned clang-format wheel
    # (analysis/uv.lock), which this build's Python has not; nixpkgs' clang-format is
    # another version and would format differently. The faults tests that run the
    # fault driver (built with cmake against each library) through Toxiproxy (built
    # by ./testbed setup with Go) have neither tool in a build. All of them run in
    # `./testbed test` (CI) instead.
    testcmd=tests/test_suites_testcmd.py
    perftools=tests/test_sweep_perf_tools.py
    report=tests/test_results_report.py
    cd analysis && python -m pytest -q -p no:cacheprovider \
      --ignore=tests/test_toolchain_sources.py \
      --ignore=tests/test_toolchain_zlink_revision.py \
      --ignore=tests/test_nix_formatting.py \
      --ignore=tests/test_clang_format_suite.py \
      --deselect \
        tests/test_sweep_run.py::test_libs_option_runs_zlink_at_a_revision_and_records_its_commit \
      --ignore=tests/test_toolchain_curve.py \
      --ignore=tests/test_toolchain_libraries.py \
      --deselect tests/test_libzmq_suite.py::test_three_real_tests_pass_against_libzmq \
      --deselect \
        tests/test_libzmq_suite.py::test_dropin_check_fails_when_the_loader_picks_another_library \
      --ignore=tests/test_sweep_netns.py \
      --ignore=tests/test_faults_real.py \
      --deselect tests/test_faults_proxy.py::test_toxics_behave_as_the_experiments_assume \
      --ignore=tests/test_sweep_slurm_cluster.py \
      --ignore=tests/test_sweep_bisect.py \
      --ignore=tests/test_bisect_slowdown.py \
      --deselect "$perftools::test_a_broken_libzmq_so_fails_its_cells_and_the_sweep_goes_on" \
      --deselect "$perftools::test_real_programs_on_both_libraries_through_the_runner" \
      --deselect \
        tests/test_sweep_two_process.py::test_the_ssh_driver_runs_each_role_on_its_host \
      --deselect "$report::test_committed_reports_are_current" \
      --deselect "$report::test_committed_published_reports_rebuild_without_seeds" \
      --deselect \
        "$testcmd::test_tsan_suite_is_selectable_and_builds_zlink_under_thread_sanitizer"
  '';

  # reports-unchanged executes every notebook whose experiment has a published run
  # (regenerate renders notebook.html, and the scorecard's compare-runs.html); this
  # check executes the rest, which have no run of their own in a build, on the newest
  # published batch-sweep run, so no notebook is executed twice.
  notebooks = pythonCheck "notebooks" ''
    python - <<'PY'
    import pathlib, sys, nbformat
    from nbclient import NotebookClient
    import os
    books = sorted(pathlib.Path("notebooks").glob("*.ipynb"))
    if not books:
        sys.exit("notebooks: no notebooks/*.ipynb to execute")
    published = {p.parent.parent.name for p in pathlib.Path("reports").glob("*/*/manifest.json")}
    rest = [b for b in books if b.stem != "compare-runs" and b.stem not in published]
    runs = sorted(pathlib.Path("reports/batch-sweep").glob("*/manifest.json"))
    if not runs:
        sys.exit("notebooks: no published run under reports/batch-sweep to read")
    os.environ["TESTBED_NOTEBOOK_RUN"] = str(runs[-1].parent.resolve())
    for book in rest:
        nb = nbformat.read(book, as_version=4)
        where = {"metadata": {"path": str(book.parent)}}
        NotebookClient(nb, timeout=600, kernel_name="python3", resources=where).execute()
        print(f"executed {book} on {runs[-1].parent.name}")
    print(f"{len(books) - len(rest)} notebooks with a published run: executed by reports-unchanged")
    PY
  '';

  # Markdown and data byte for byte; the figures and notebook HTML by name only: this
  # build draws them with nixpkgs' matplotlib/FreeType, the committed ones were drawn
  # with analysis/uv.lock's, so their bytes differ whatever the data (the run says so).
  reports-unchanged = pythonCheck "reports-unchanged" ''
    bash ./testbed regenerate --check --figures-by-name
  '';

  formatting = runCommand "nix-formatting" { nativeBuildInputs = [ nixfmt ]; } ''
    cd ${lib.fileset.toSource {
      root = nixFiles;
      fileset = lib.fileset.fileFilter (file: file.hasExt "nix") nixFiles;
    }}
    find . -name '*.nix' -print0 | xargs -0 nixfmt --check
    touch $out
  '';
}
