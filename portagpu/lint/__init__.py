"""portagpu's linter: rules are YAML data under rules/, checkers are Python."""
