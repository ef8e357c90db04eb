"""SemanticTest JSON suites."""
