"""One module per `checker:` named in rules/cuda_*.yaml; each has
`check(unit, rule) -> Iterable[Hit]`."""
