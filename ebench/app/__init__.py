"""ebench.app (see DESIGN.md)."""
