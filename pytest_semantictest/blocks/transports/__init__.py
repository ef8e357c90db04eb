"""Clients of the transports a compliance case can use besides completions: A2A (both dialects) and Realtime."""
