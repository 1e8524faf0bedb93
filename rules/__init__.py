"""portagpu's rule catalogue: YAML data only, loaded by portagpu.lint.catalogue."""
