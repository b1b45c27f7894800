"""Task templates, one module per domain, each exposing `TEMPLATES` (Template subclasses)."""
