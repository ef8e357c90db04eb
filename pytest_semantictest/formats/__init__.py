"""File formats: each loader reads one format, validates it and compiles it to model.Suite."""
