"""One module per diagnosis. Each defines `RULE`, a `logforensics.registry.Rule`."""
