"""ebench.sessions (see DESIGN.md)."""
