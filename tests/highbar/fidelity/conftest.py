"""The fidelity specs need their ``${FIDELITY_*}`` environment and agent: ``test_highbar_fidelity.py``
runs them (copied to a temp dir), so pytest does not collect them here."""

collect_ignore_glob = ["*.highbar.yaml"]
