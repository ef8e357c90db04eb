"""What a check can be; each evaluates to failures as data."""
