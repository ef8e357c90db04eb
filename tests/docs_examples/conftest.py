"""The docs' page recipes (``pages/*.json``) are data for test_docs_examples.py (docs_text.py resolves
them from the documentation), not suites for the plugin to collect here.

Their suites read ``${env.BASE_URL}`` (the loopback example agent the test module starts), so collecting them
directly would run them against nothing.
"""

collect_ignore_glob = ["*.json"]
