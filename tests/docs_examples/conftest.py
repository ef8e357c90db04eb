"""The docs-example suites are data for test_docs_examples.py and test_seed_examples.py (``seed/``), not
suites for the plugin to collect here.

They read ``${env.BASE_URL}`` (the loopback example agent the test module starts), so collecting them
directly would run them against nothing.
"""

collect_ignore_glob = ["*.json"]
