"""The report: one plain-data model, rendered as JSON or as one self-contained HTML file."""
