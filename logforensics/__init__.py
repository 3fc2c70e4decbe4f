"""logforensics: tells why a multi-rank PyTorch job hung, from its logs alone."""

__version__ = "0.1.0"
