"""One module per log family. Each defines `PARSER`, a `logforensics.registry.LineParser`."""
