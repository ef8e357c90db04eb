"""``upstream/`` holds the reference repository's example suites: data for test_upstream_examples.py
(they read ``${env.BASE_URL}``, which only that test points at a server)."""

collect_ignore_glob = ["upstream/*.json"]
